# Build the single binary, then ship it alone on a slim base.
FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

FROM debian:bookworm-slim
RUN useradd --system --home /var/lib/shortlink shortlink && mkdir -p /var/lib/shortlink && chown shortlink /var/lib/shortlink
COPY --from=build /src/dist/shortlink /usr/local/bin/shortlink
USER shortlink
WORKDIR /var/lib/shortlink
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/shortlink"]
CMD ["serve"]
