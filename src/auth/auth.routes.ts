import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import {
  CreatedKey,
  CreateKeyBody,
  CreateUserBody,
  KeyIdParams,
  KeyRecord,
  ListKeysQuery,
  ListUsersQuery,
  SessionRecord,
  SignInBody,
  UpdateUserBody,
  UserIdParams,
  UserRecord,
} from './auth.schema'
import type { KeyService } from './keys.service'
import { callerOf, requestContextOf } from './request-context'
import { SESSION_COOKIE, type SessionService } from './session.service'
import type { UserService } from './users.service'

const errors = errorResponses(400, 401, 403, 404, 410, 422, 429)
const LOCK_OUT =
  "`usr_admin` (the operator's user: the config adminKey and the first printed key act as it) and the caller's own user cannot be disabled, deleted or demoted from admin here (422 parameter_error); another admin, or the CLI, can."

const SESSION_TAG = 'Dashboard session'
const SESSION_ERRORS = errorResponses(400, 401, 403, 422, 429)

export function authRoutes({ keys, users, sessions }: { keys: KeyService; users: UserService; sessions: SessionService }) {
  return new Elysia({ name: 'auth', normalize: false })
    .post(
      '/session',
      async ({ body, request, set }) => {
        const signedIn = await sessions.signIn(body, {
          clientIp: requestContextOf(request)?.clientIp ?? '',
          origin: request.headers.get('origin'),
          previousToken: sessions.tokenOf(request.headers.get('cookie')),
        })
        set.headers['set-cookie'] = signedIn.cookie
        set.headers['cache-control'] = 'no-store'
        return signedIn.session
      },
      {
        body: SignInBody,
        response: { 200: SessionRecord, ...SESSION_ERRORS },
        detail: {
          tags: [SESSION_TAG],
          summary: 'Sign in (dashboard)',
          security: [],
          description: `No Authorization header needed. Send \`{ userId, password }\` (the password set by \`shortlink users passwd\` or POST /users) or \`{ apiKey }\`. The answer sets \`${SESSION_COOKIE}\` (HttpOnly, Secure, SameSite=Strict, Path=/), which then authenticates API requests sent without an Authorization header: a password session acts with the user's role, an API-key session with the lower of that key's role and the user's current role (revoking the key ends it); disabling or deleting the user ends both. Requests other than GET/HEAD/OPTIONS made with the cookie must come from the server's origin (\`Origin\`, or \`Sec-Fetch-Site: same-origin\`) and carry \`X-CSRF-Token: <csrfToken>\`, else 403. A session ends after 12 hours unused and 7 days after sign-in. Every failure is 401 with one message (wrong user or password, unknown or revoked key, disabled user, no password set); after 10 failures in 15 minutes from one address (an IPv6 /64) it is 429 with Retry-After. An \`Origin\` other than the server's is 403.`,
        },
      },
    )
    .get(
      '/session',
      async ({ request, set }) => {
        set.headers['cache-control'] = 'no-store'
        const { session, cookie } = await sessions.probe(request.headers.get('cookie'))
        if (cookie) set.headers['set-cookie'] = cookie
        if (session) return session
        set.status = 204
        return undefined
      },
      {
        response: { 200: SessionRecord, 204: t.Void(), ...SESSION_ERRORS },
        detail: {
          tags: [SESSION_TAG],
          summary: 'The current session',
          security: [],
          description:
            'Who the session cookie signs in, with its CSRF token (the dashboard reads it on load). 204 with no body when the request carries no working session cookie (none, ended or expired; an ended one is expired in the answer), so a signed-out page can ask without an error. An Authorization header plays no part here.',
        },
      },
    )
    .delete(
      '/session',
      async ({ request, set }) => {
        set.headers['set-cookie'] = (await sessions.signOut(callerOf(request))).cookie
        return {}
      },
      {
        response: { 200: t.Object({}), ...SESSION_ERRORS },
        detail: {
          tags: [SESSION_TAG],
          summary: 'Sign out',
          description:
            'Ends the session the cookie names (it answers 401 from then on, on every node within a second) and expires the cookie. Needs the Origin and X-CSRF-Token checks like every cookie write; readonly sessions may sign out too.',
        },
      },
    )
    .post('/keys', ({ body, request }) => keys.create(callerOf(request), body), {
      body: CreateKeyBody,
      response: { 200: CreatedKey, ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Create an API key',
        description:
          "Admins: for any user and role. Members: for themselves, role member or readonly (else 403). A key acts with the lower of its own role and its user's current role, so none is minted above either: a `role` above the role the caller acts with is 403 `forbidden`; a `role` above the target user's role is 422 `parameter_error` (change the user's role first with PATCH /users/{id}). A missing user is created with the key's `role`. The `key` is in this response only; the store keeps its hash.",
      },
    })
    .get(
      '/keys',
      async ({ request, set }) => {
        const q = parseQuery(ListKeysQuery, new URL(request.url).searchParams)
        const { keys: list, total } = await keys.list(callerOf(request), q)
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(KeyRecord), ...errors },
        detail: {
          tags: ['Keys and users'],
          summary: 'List API keys',
          description:
            "Admins see every key, members and readonly keys their own; never the secret. Newest first; revoked keys only with `includeRevoked=true`. The config file's adminKey is not a stored key and is not listed. `X-Total-Count` holds the number of matches before paging.",
          parameters: queryParameters(ListKeysQuery),
        },
      },
    )
    .delete('/keys/:id', ({ params, request }) => keys.revoke(callerOf(request), params.id), {
      params: KeyIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Revoke an API key',
        description:
          "Admins: any key; members: their own (another user's key is 403). The key answers 401 from the next request on this node and within a second on every node sharing the store. Revoking a revoked key is 410 record_gone.",
      },
    })
    .get(
      '/users',
      async ({ request, set }) => {
        const q = parseQuery(ListUsersQuery, new URL(request.url).searchParams)
        const { users: list, total } = await users.list(callerOf(request), q)
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(UserRecord), ...errors },
        detail: {
          tags: ['Keys and users'],
          summary: 'List users',
          description: 'Admin only. Deleted users are not listed; disabled ones are. Newest first; `X-Total-Count` holds the number before paging.',
          parameters: queryParameters(ListUsersQuery),
        },
      },
    )
    .post('/users', ({ body, request }) => users.create(callerOf(request), body), {
      body: CreateUserBody,
      response: { 200: UserRecord, ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Create a user',
        description: 'Admin only. An id that exists, or existed (deleted users keep their id), is 422.',
      },
    })
    .get('/users/:id', ({ params, request }) => users.get(callerOf(request), params.id), {
      params: UserIdParams,
      response: { 200: UserRecord, ...errors },
      detail: { tags: ['Keys and users'], summary: 'Get a user', description: 'Admin only. A deleted user answers 410 record_gone.' },
    })
    .patch('/users/:id', ({ params, body, request }) => users.update(callerOf(request), params.id, body), {
      params: UserIdParams,
      body: UpdateUserBody,
      response: { 200: UserRecord, ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Update a user',
        description: `Admin only. \`disabled: true\` makes the user's keys answer 401 (within a second on every node) until it is set back to false. \`password: null\` removes the password. ${LOCK_OUT}`,
      },
    })
    .delete('/users/:id', ({ params, request }) => users.remove(callerOf(request), params.id), {
      params: UserIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Delete a user',
        description: `Admin only. Soft delete: the user is no longer listed, its keys are revoked and its password removed; its links and files stay, and the id is never reused (later reads answer 410). ${LOCK_OUT}`,
      },
    })
}
