/**
 * A raw graphql-transport-ws client for tests that need to see exact messages, close codes and
 * refused upgrades (graphql-ws' client hides them behind retries and its own errors).
 */
import WebSocket from 'ws';

export interface Message {
  type: string;
  id?: string;
  payload?: unknown;
}

/** A raw graphql-transport-ws connection that records what it receives. */
export function openSocket(
  url: string,
): Promise<{ socket: WebSocket; next: (match: (m: Message) => boolean) => Promise<Message>; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    const received: Message[] = [];
    const waiting: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
    const closed = new Promise<number>((resolveClosed) => socket.once('close', (code) => resolveClosed(code)));
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as Message;
      const index = waiting.findIndex((w) => w.match(message));
      if (index === -1) received.push(message);
      else waiting.splice(index, 1)[0]?.resolve(message);
    });
    const next = (match: (m: Message) => boolean) =>
      new Promise<Message>((resolveNext, rejectNext) => {
        const index = received.findIndex(match);
        if (index !== -1) return resolveNext(received.splice(index, 1)[0] as Message);
        waiting.push({ match, resolve: resolveNext });
        void closed.then((code) => rejectNext(new Error(`connection closed with ${code} before the expected message`)));
      });
    socket.once('open', () => resolve({ socket, next, closed }));
    socket.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused with ${res.statusCode}`), { status: res.statusCode })),
    );
    socket.once('error', reject);
  });
}

/** Opens a connection and sends connection_init: 'ack' or the close code. */
export async function initConnection(url: string, token?: string) {
  const connection = await openSocket(url);
  connection.socket.send(
    JSON.stringify({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} }),
  );
  const outcome = await Promise.race([
    connection.next((m) => m.type === 'connection_ack').then(() => 'ack' as const),
    connection.closed,
  ]);
  return { ...connection, outcome };
}

export async function closeAll(sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) return resolve();
          socket.once('close', () => resolve());
          socket.close();
        }),
    ),
  );
}
