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
  UpdateUserBody,
  UserIdParams,
  UserRecord,
} from './auth.schema'
import type { KeyService } from './keys.service'
import { callerOf } from './request-context'
import type { UserService } from './users.service'

const errors = errorResponses(400, 401, 403, 404, 410, 422, 429)
const LOCK_OUT =
  "`usr_admin` (the operator's user: the config adminKey and the first printed key act as it) and the caller's own user cannot be disabled, deleted or demoted from admin here (422 parameter_error); another admin, or the CLI, can."

export function authRoutes({ keys, users }: { keys: KeyService; users: UserService }) {
  return new Elysia({ name: 'auth', normalize: false })
    .post('/keys', ({ body, request }) => keys.create(callerOf(request), body), {
      body: CreateKeyBody,
      response: { 200: CreatedKey, ...errors },
      detail: {
        tags: ['Keys and users'],
        summary: 'Create an API key',
        description:
          'Admins: for any user and role. Members: for themselves, role member or readonly (else 403). The user is created (role member) when missing. The `key` is in this response only; the store keeps its hash.',
      },
    })
    .get(
      '/keys',
      ({ request, set }) => {
        const q = parseQuery(ListKeysQuery, new URL(request.url).searchParams)
        const { keys: list, total } = keys.list(callerOf(request), q)
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
      ({ request, set }) => {
        const q = parseQuery(ListUsersQuery, new URL(request.url).searchParams)
        const { users: list, total } = users.list(callerOf(request), q)
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
