/**
 * The signature phaselog puts on what it sends (notification deliveries, webhook-check requests):
 * `X-Phaselog-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the scheme of
 * Stripe's `Stripe-Signature`. The timestamp is signed with the body, so a receiver that refuses
 * signatures older than a few minutes (README: "Verifying a signature") refuses a captured request
 * replayed later; a body-only signature would verify forever. `v1` names the scheme so a later one
 * can be sent beside it.
 */
import { createHmac } from 'node:crypto';

/** The header carrying the signature. */
export const SIGNATURE_HEADER = 'X-Phaselog-Signature';

/** `t=<unix seconds>,v1=<hex>` of `body` under `secret`, signed at `at`. */
export function signRequest(secret: string, body: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
}
