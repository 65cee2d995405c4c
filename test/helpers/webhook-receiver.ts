/**
 * A local notification receiver (node:http on port 0): records every request with its idempotency
 * key and whether its signature checks out against the secret (with the README's own verification
 * code, at the time it arrives), and answers what the test says.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readmeVerifier } from './readme-signature.ts';

/** One request the receiver got. */
export interface ReceivedHit {
  key: string;
  contentType: string;
  /** The signature header verified against the secret; undefined when the receiver has none. */
  signed?: boolean;
  body: Record<string, unknown>;
  /** The body's bytes as received, and the signature header: what a replay would send again. */
  raw: string;
  signature?: string;
  /** The status it answered. */
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  hits: ReceivedHit[];
  /** Keys answered 2xx, with how many times each. */
  accepted(): Map<string, number>;
  /** Decides the answer to each request (default 200); `attempt` counts the key's requests from 1. */
  respond: (hit: Omit<ReceivedHit, 'answered'>, attempt: number) => number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts a receiver; with `secret`, each hit's signature is checked as a receiver should. */
export async function startWebhookReceiver(secret?: string): Promise<WebhookReceiver> {
  const verify = await readmeVerifier();
  const receiver: WebhookReceiver = {
    url: '',
    hits: [],
    respond: () => 200,
    accepted() {
      const counts = new Map<string, number>();
      for (const hit of receiver.hits) if (hit.answered < 300) counts.set(hit.key, (counts.get(hit.key) ?? 0) + 1);
      return counts;
    },
    close: async () => {},
  };
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const key = String(req.headers['x-phaselog-delivery'] ?? '');
      const signature = req.headers['x-phaselog-signature'] as string | undefined;
      const signed = secret === undefined ? undefined : verify(secret, raw, signature);
      const hit = {
        key,
        contentType: String(req.headers['content-type'] ?? ''),
        ...(signed !== undefined ? { signed } : {}),
        body: JSON.parse(raw) as Record<string, unknown>,
        raw,
        ...(signature !== undefined ? { signature } : {}),
      };
      const attempt = receiver.hits.filter((h) => h.key === key).length + 1;
      const answered = receiver.respond(hit, attempt);
      receiver.hits.push({ ...hit, answered });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
