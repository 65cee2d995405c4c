/**
 * A local notification receiver (node:http on port 0): records every request with its idempotency
 * key and whether its HMAC signature checks out against the secret, and answers what the test says.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedHit {
  key: string;
  contentType: string;
  /** The signature header verified against the secret; undefined when the receiver has none. */
  signed?: boolean;
  body: Record<string, unknown>;
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
      let signed: boolean | undefined;
      if (secret !== undefined) {
        const given = Buffer.from(String(req.headers['x-phaselog-signature'] ?? ''));
        const wanted = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
        signed = given.length === wanted.length && timingSafeEqual(given, wanted);
      }
      const hit = {
        key,
        contentType: String(req.headers['content-type'] ?? ''),
        ...(signed !== undefined ? { signed } : {}),
        body: JSON.parse(raw) as Record<string, unknown>,
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
