import { Type as t } from '@sinclair/typebox'
import { pagingQuery } from '../shared'

export const PASSWORD_MIN = 8
/** Bounds the argon2id hashing cost an admin request can cause. */
export const PASSWORD_MAX = 256

const RoleSchema = t.Union([t.Literal('admin'), t.Literal('member'), t.Literal('readonly')], {
  description: 'One of admin, member, readonly.',
})
const UserId = t.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'User id; `alice` and `usr_alice` name the same user.',
})
const Password = t.String({
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  description: `Password for dashboard sign-in, ${PASSWORD_MIN}-${PASSWORD_MAX} characters; stored as an argon2id hash, never returned.`,
})
const Timestamp = t.String({ format: 'date-time' })

export const KeyRecord = t.Object({
  id: t.String({ description: 'Key identifier (key_…).' }),
  userId: t.String(),
  role: t.String({
    description:
      "The role the key acts with now: the lower of `grantedRole` and its user's current role (admin, member or readonly). Demoting the user lowers it on every node within a second.",
  }),
  grantedRole: t.String({ description: 'The role the key was created with; it acts with it again if its user regains that role.' }),
  name: t.Union([t.String(), t.Null()]),
  createdAt: Timestamp,
  lastUsedAt: t.Union([Timestamp, t.Null()], {
    description:
      'When the key last authenticated a request, accurate to about a minute (uses are written once a minute; a node stopped hard loses its last minute). Null when never used.',
  }),
  prefix: t.String({ description: 'The first characters of the key, to recognise it.' }),
  revokedAt: t.Union([Timestamp, t.Null()], { description: 'When the key was revoked; null while it works.' }),
})

export const CreatedKey = t.Object({
  id: t.String({ description: 'Key identifier (key_…).' }),
  key: t.String({ description: 'The secret key; shown this once, only its hash is stored.' }),
  userId: t.String(),
  role: t.String(),
  name: t.Union([t.String(), t.Null()]),
  createdAt: Timestamp,
})

export const CreateKeyBody = t.Object(
  {
    userId: UserId,
    role: RoleSchema,
    name: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'A label, 1-100 characters.' })),
  },
  { additionalProperties: false },
)

export const ListKeysQuery = t.Object({
  userIds: t.Optional(t.Array(UserId, { maxItems: 100, description: 'Owners (repeated); members may name only themselves.' })),
  includeRevoked: t.Optional(t.Boolean({ default: false, description: 'Also list revoked keys.' })),
  ...pagingQuery(100),
})

export const KeyIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })

export const UserRecord = t.Object({
  id: t.String({ description: 'User identifier (usr_…).' }),
  role: t.String({
    description:
      "The role a password sign-in to the dashboard acts with, and the most the user's API keys act with (each key acts with the lower of its own role and this).",
  }),
  createdAt: Timestamp,
  disabled: t.Boolean({ description: "A disabled user's keys and sessions do not work." }),
  hasPassword: t.Boolean(),
})

export const CreateUserBody = t.Object(
  { id: UserId, password: t.Optional(Password), role: t.Optional(RoleSchema) },
  { additionalProperties: false, description: '`role` defaults to member.' },
)

export const UpdateUserBody = t.Object(
  {
    password: t.Optional(t.Union([Password, t.Null()], { description: 'A new password, or null to remove it.' })),
    role: t.Optional(RoleSchema),
    disabled: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
)

export const ListUsersQuery = t.Object({ ...pagingQuery(100) })

export const UserIdParams = t.Object({ id: UserId })

export const SignInBody = t.Object(
  {
    userId: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'With `password`: the user to sign in as (`alice` or `usr_alice`).' })),
    password: t.Optional(
      t.String({ minLength: 1, maxLength: PASSWORD_MAX, description: "With `userId`: the user's password (set by `shortlink users passwd` or POST /users)." }),
    ),
    apiKey: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Alone: an API key; the session acts with its user, role and key.' })),
  },
  { additionalProperties: false, description: 'Exactly one form: `userId` and `password`, or `apiKey`.' },
)

export const SessionRecord = t.Object({
  userId: t.String({ description: 'The user the session acts as.' }),
  role: t.Union([t.Literal('admin'), t.Literal('member'), t.Literal('readonly')], {
    description: "The role the session acts with now: the user's role (password), or the lower of its key's role and the user's role (apiKey).",
  }),
  method: t.Union([t.Literal('password'), t.Literal('apiKey')], { description: 'How the session was opened.' }),
  csrfToken: t.String({
    description: 'Send it as `X-CSRF-Token` on every request other than GET/HEAD/OPTIONS made with the session cookie; valid for this session only.',
  }),
  expiresAt: t.String({
    format: 'date-time',
    description: 'When the session ends unless used again: 12 hours after its last use, and never later than 7 days after sign-in.',
  }),
})
