import { DEFAULT_FRAUD_RULES } from '../domain/fraud-rules.js'
import type {
  AdminSessionRecord,
  AffiliateRecord,
  ApiKeyRecord,
  CampaignRecord,
  ClickRecord,
  CommissionRecord,
  CustomerRecord,
  EventRecord,
  IntegrationRecord,
  ProviderEventRecord,
  PromoCodeRecord,
  IdempotencyRecord,
  LinkRecord,
  PayoutRecord,
  PortalTokenRecord,
  RollupRecord,
  SaleRecord,
  SaleRefundRecord,
  SequenceRecord,
  SettingRecord,
  WebhookDeliveryRecord,
  WebhookRecord,
} from '../domain/records.js'
import type { ModelName, RecordOf } from './types.js'

// Records of every model with every kind of value a storage must keep exactly: booleans both
// ways, nulls, string arrays (empty and not), integers (zero, negative, beyond 32 bits), text
// outside ASCII and with quotes.

export const WORKSPACE = '6f1c2a7e-0000-4000-8000-000000000001'
export const OTHER_WORKSPACE = '6f1c2a7e-0000-4000-8000-000000000002'

let counter = 0
/** A fresh UUID-shaped id; ids sort in creation order, which the ordering tests do not rely on. */
export const sampleId = (): string => `00000000-0000-4000-8000-${(++counter).toString(16).padStart(12, '0')}`

/** An ISO timestamp `n` seconds into 2026: lets a test choose equal or distinct `createdAt`s. */
export const at = (n: number): string => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()

export const campaign = (overrides: Partial<CampaignRecord> = {}): CampaignRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignName: 'Spring "launch" — été',
  commissionType: 'percentage',
  amountMinor: 12_50,
  minimumPayoutMinor: 0,
  fraudRules: JSON.stringify(DEFAULT_FRAUD_RULES),
  payoutId: sampleId(),
  url: 'https://shop.example.com/landing?x=1',
  requiresApprovalToJoin: true,
  collectAdditionalInfo: false,
  hideCustomerEmail: false,
  payoutTerm: 30,
  affiliatePortalWelcomeMessage: "Welcome, it's good to see you",
  affiliateDashboardText: '',
  stripeCouponId: '',
  allowedUrlParameters: ['ref', 'via', 'ü'],
  beaconInstalled: false,
  isDefault: false,
  currency: 'USD',
  attributionWindowDays: 30,
  recurringMonths: null,
  maxCommissionsPerCustomer: 3,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const affiliate = (overrides: Partial<AffiliateRecord> = {}): AffiliateRecord => {
  const email = overrides.email ?? `person${counter + 1}@example.com`
  return {
    id: sampleId(),
    workspaceId: WORKSPACE,
    campaignId: sampleId(),
    email,
    emailKey: email.toLowerCase(),
    firstName: 'Zoë',
    lastName: "O'Brien",
    notes: '',
    payoutEmail: email,
    payoutMethod: null,
    details: null,
    isActive: true,
    isBanned: false,
    portalDevices: ['DA0ODxAREhMUFRYX'],
    refundWindow: ['2026-01-01', '12', '3'],
    totalOpens: 0,
    totalClicks: 0,
    totalSignups: 0,
    totalEarningsMinor: 0,
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  }
}

export const link = (overrides: Partial<LinkRecord> = {}): LinkRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: sampleId(),
  affiliateId: sampleId(),
  userId: null,
  referralCode: `REF-${(counter + 1).toString(36).toUpperCase().padStart(8, '0')}`,
  urlParameter: 'ref',
  url: 'https://shop.example.com/?ref=x',
  shareUrl: 'https://shop.example.com/?via=x',
  totalOpens: 0,
  totalClicks: 0,
  totalSignups: 0,
  totalEarningsMinor: 0,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const commission = (overrides: Partial<CommissionRecord> = {}): CommissionRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: sampleId(),
  affiliateId: sampleId(),
  referredUser: 'buyer@example.com',
  referredUserKey: 'buyer@example.com',
  amountMinor: 10_00,
  adminEarnedMinor: 2_50,
  status: 'pending',
  commissionDate: at(0),
  remarks: null,
  payoutDate: null,
  name: null,
  isSelfReferral: false,
  isWalletPayment: 0,
  chargeId: null,
  invoiceId: null,
  stripeSubscriptionId: null,
  linkId: null,
  referralCode: null,
  kind: 'sale',
  dueAt: at(30 * 86_400),
  payoutId: null,
  refundedMinor: 0,
  reversesCommissionId: null,
  saleAmountMinor: null,
  currency: 'EUR',
  customerId: null,
  paymentIntentId: null,
  holdReasons: [],
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const payout = (overrides: Partial<PayoutRecord> = {}): PayoutRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: sampleId(),
  affiliateId: sampleId(),
  currency: 'EUR',
  amountMinor: 123_45,
  commissionCount: 3,
  status: 'pending',
  payoutMethod: 'WISE',
  payoutEmail: 'zoë@example.com',
  periodEnd: at(60 * 86_400),
  externalReference: null,
  failureReason: null,
  paidAt: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const apiKey = (overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: sampleId(),
  hash: `${(counter + 1).toString(16).padStart(64, '0')}`,
  lookup: `${(counter + 1).toString(16).padStart(16, '0')}`,
  prefix: 'aff_live_AbCd',
  userId: sampleId(),
  workspaceIds: [WORKSPACE, OTHER_WORKSPACE],
  label: '',
  revokedAt: null,
  kind: 'secret',
  allowedOrigins: [],
  lastUsedAt: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const idempotency = (overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  id: sampleId(),
  scopeKey: `${(counter + 1).toString(16).padStart(64, '0')}`,
  requestHash: 'f'.repeat(64),
  state: 'done',
  status: 201,
  body: '{"status":201,"message":"Created","data":{"id":"x"}}',
  expiresAt: at(86_400),
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const event = (overrides: Partial<EventRecord> = {}): EventRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  type: 'campaign.created',
  sequence: ++counter,
  data: '{"id":"x"}',
  createdAt: at(0),
  ...overrides,
})

export const webhook = (overrides: Partial<WebhookRecord> = {}): WebhookRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  url: 'https://hooks.example.com/affiliates',
  events: ['*'],
  description: '',
  enabled: true,
  disabledReason: null,
  consecutiveDeadDeliveries: 0,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previousSecrets: [],
  previousSecretExpiresAt: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const webhookDelivery = (overrides: Partial<WebhookDeliveryRecord> = {}): WebhookDeliveryRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  webhookId: sampleId(),
  eventId: sampleId(),
  eventType: 'campaign.created',
  status: 'pending',
  attempts: 0,
  nextAttemptAt: at(0),
  claimToken: null,
  lastStatusCode: null,
  lastError: null,
  lastResponseBody: null,
  lastDurationMs: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const sequence = (overrides: Partial<SequenceRecord> = {}): SequenceRecord => ({
  id: `sequence-${++counter}`,
  value: 0,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})
export const rollup = (overrides: Partial<RollupRecord> = {}): RollupRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: '',
  affiliateId: '',
  hourStart: at(3600),
  seriesKey: `${WORKSPACE}|*|*|2026-01-01`,
  rankKey: null,
  opens: 0,
  clicks: 3,
  signups: 1,
  saleCount: 2,
  earningsMinor: 5_000_000_000,
  pendingCount: 1,
  pendingMinor: 25_00,
  processingCount: 0,
  processingMinor: 0,
  paidCount: 1,
  paidMinor: 4_999_997_500,
  refundedCount: 0,
  refundedMinor: 0,
  clawbackCount: 1,
  clawbackMinor: -12_34,
  payoutCount: 0,
  paidOutMinor: 0,
  salesMinor: 0,
  holdCount: 1,
  holdMinor: 7_00,
  voidedCount: 0,
  voidedMinor: 0,
  createdAt: at(0),
  ...overrides,
})

export const click = (overrides: Partial<ClickRecord> = {}): ClickRecord => ({
  id: sampleId(),
  linkId: sampleId(),
  event: 'click',
  visitor: `${(counter + 1).toString(16).padStart(22, '0')}`,
  address: 'AAECAwQFBgcICQoL',
  device: 'DA0ODxAREhMUFRYX',
  paidAd: false,
  createdAt: at(0),
  ...overrides,
})

export const setting = (overrides: Partial<SettingRecord> = {}): SettingRecord => ({
  id: `setting-${counter + 1}`,
  value: 'ö-value',
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const portalToken = (overrides: Partial<PortalTokenRecord> = {}): PortalTokenRecord => ({
  id: `${(++counter).toString(16).padStart(64, '0')}`,
  kind: 'session',
  email: 'ann@example.com',
  affiliateId: sampleId(),
  expiresAt: at(86_400),
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const adminSession = (overrides: Partial<AdminSessionRecord> = {}): AdminSessionRecord => ({
  id: `${(++counter).toString(16).padStart(64, '0')}`,
  userId: 'admin',
  expiresAt: at(43_200),
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const customer = (overrides: Partial<CustomerRecord> = {}): CustomerRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: sampleId(),
  affiliateId: sampleId(),
  linkId: null,
  clickId: sampleId(),
  attributedAt: at(-60),
  externalId: `user-${counter + 1}-ü`,
  email: 'Zoë@Example.com',
  emailKey: 'zoë@example.com',
  name: null,
  stripeCustomerId: `cus_${counter + 1}`,
  clickAddress: 'AAECAwQFBgcICQoL',
  clickDevice: '',
  clickPaidAd: true,
  clickAddressCount: 2,
  firstSaleAt: at(60),
  salesCount: 3,
  commissionCount: 0,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const sale = (overrides: Partial<SaleRecord> = {}): SaleRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  invoiceId: `in_${counter + 1}`,
  chargeId: null,
  paymentIntentId: null,
  subscriptionId: 'sub_ü',
  stripeCustomerId: null,
  customerId: sampleId(),
  commissionId: null,
  currency: 'EUR',
  amountMinor: 9_007_199_254_740_000,
  refundedMinor: 0,
  commissionMinor: 20_00,
  commissionRefundedMinor: 0,
  paidAt: at(30),
  answer: '{"skipped":"not_attributed","note":"quotes \\" and ü"}',
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const saleRefund = (overrides: Partial<SaleRefundRecord> = {}): SaleRefundRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  saleId: sampleId(),
  refundId: null,
  amountMinor: 5_00,
  commissionMinor: -1,
  answer: '{}',
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const integration = (overrides: Partial<IntegrationRecord> = {}): IntegrationRecord => {
  const id = overrides.id ?? sampleId()
  return {
    id,
    workspaceId: WORKSPACE,
    provider: 'stripe',
    campaignId: null,
    livemode: true,
    endpointPath: `/api/v1/integrations/${id}/events`,
    description: 'Stripe ü',
    signingSecret: 'whsec_test',
    apiKey: 'rk_test_ü',
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  }
}

export const providerEvent = (overrides: Partial<ProviderEventRecord> = {}): ProviderEventRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  integrationId: sampleId(),
  eventId: `evt_${counter + 1}`,
  type: 'invoice.paid',
  status: 'processed',
  reason: null,
  commissionId: null,
  invoiceId: null,
  chargeId: null,
  paymentIntentId: null,
  chargedMinor: 0,
  refundedMinor: 0,
  receivedAt: at(0),
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

export const promoCode = (overrides: Partial<PromoCodeRecord> = {}): PromoCodeRecord => ({
  id: sampleId(),
  workspaceId: WORKSPACE,
  campaignId: sampleId(),
  affiliateId: sampleId(),
  code: `CODE-${counter + 1}`,
  stripePromotionCodeId: null,
  uses: 0,
  createdAt: at(0),
  updatedAt: at(0),
  ...overrides,
})

/** Each model's sample record maker: one record of every model, as the conformance kit stores them. */
export const sampleOf: { [M in ModelName]: (overrides?: Partial<RecordOf<M>>) => RecordOf<M> } = {
  campaigns: campaign,
  affiliates: affiliate,
  links: link,
  commissions: commission,
  payouts: payout,
  apiKeys: apiKey,
  idempotency,
  events: event,
  webhooks: webhook,
  webhookDeliveries: webhookDelivery,
  sequences: sequence,
  rollups: rollup,
  clicks: click,
  settings: setting,
  portalTokens: portalToken,
  adminSessions: adminSession,
  customers: customer,
  sales: sale,
  saleRefunds: saleRefund,
  integrations: integration,
  providerEvents: providerEvent,
  promoCodes: promoCode,
}
