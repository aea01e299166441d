import { connect, type ConnectedProvider } from './contract.js'
import { lemonSqueezyProvider } from './lemonsqueezy.js'
import { paddleProvider } from './paddle.js'
import { stripeProvider } from './stripe.js'

// Every payment provider the integrations take (SPEC wave 4, "Payment providers beyond Stripe: one
// contract"), by the name `POST /integrations` gives as `provider`. A fourth is one module and one line.

export const PROVIDERS: Record<'stripe' | 'paddle' | 'lemonsqueezy', ConnectedProvider> = {
  stripe: connect(stripeProvider),
  paddle: connect(paddleProvider),
  lemonsqueezy: connect(lemonSqueezyProvider),
}

export type ProviderName = keyof typeof PROVIDERS
