import type { ModelName, RecordOf } from './types.js'

export interface UniqueConstraint<M extends ModelName> {
  name: string
  fields: readonly (keyof RecordOf<M> & string)[]
}

export interface ModelDefinition<M extends ModelName> {
  /** Fields the service looks records up by; a storage should index each. */
  indexes: readonly (keyof RecordOf<M> & string)[]
  /** Field sets no two records may share (a set holding a null never collides). */
  unique: readonly UniqueConstraint<M>[]
  /** String fields that `contains` searches, case-insensitively. */
  search: readonly (keyof RecordOf<M> & string)[]
}

/** What a storage must know of each collection: lookups to index, constraints to enforce, text to search. */
export const models: { [M in ModelName]: ModelDefinition<M> } = {
  campaigns: {
    indexes: ['workspaceId'],
    unique: [],
    search: ['campaignName'],
  },
  affiliates: {
    indexes: ['workspaceId', 'campaignId'],
    unique: [{ name: 'affiliates_campaign_email', fields: ['campaignId', 'emailKey'] }],
    search: ['email', 'firstName', 'lastName'],
  },
  links: {
    indexes: ['workspaceId', 'affiliateId', 'referralCode'],
    unique: [{ name: 'links_referral_code', fields: ['referralCode'] }],
    search: ['referralCode'],
  },
  commissions: {
    indexes: ['workspaceId', 'affiliateId', 'campaignId', 'referredUserKey'],
    unique: [
      { name: 'commissions_workspace_invoice', fields: ['workspaceId', 'invoiceId'] },
      { name: 'commissions_workspace_charge', fields: ['workspaceId', 'chargeId'] },
    ],
    search: ['referredUser', 'remarks', 'name'],
  },
  apiKeys: {
    indexes: ['lookup'],
    unique: [{ name: 'api_keys_hash', fields: ['hash'] }],
    search: ['prefix', 'label'],
  },
  idempotency: {
    indexes: ['scopeKey'],
    unique: [{ name: 'idempotency_scope', fields: ['scopeKey'] }],
    search: [],
  },
}

export const modelNames = Object.keys(models) as ModelName[]
