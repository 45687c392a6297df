/** `--name value` command-line options for the benchmark scripts. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}
