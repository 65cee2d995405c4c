/**
 * Reads a receiver's URL and secret from where the configuration says they are. The configuration
 * loader calls it once to fail fast on a missing or bad file; the notification worker calls it at
 * start and keeps the values in memory only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { receiverUrlProblem, type NotificationsConfig, type ReceiverConfig } from './config.ts';

/** A receiver's URL and secret, resolved. Held in memory only. */
export interface ResolvedReceiver {
  url: string;
  secret?: string;
}

/** A problem with one file, by config key; never the file's contents. */
export interface ReceiverFileIssue {
  key: string;
  message: string;
}

function readValue(file: string, baseDir: string): { value?: string; problem?: string } {
  const full = path.resolve(baseDir, file);
  try {
    const value = readFileSync(full, 'utf8').trim();
    return value === '' ? { problem: `${full} is empty` } : { value };
  } catch (error) {
    return { problem: `cannot read ${full}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` };
  }
}

/** The receiver's URL and secret, or the problems found (keys relative to the receiver). */
export function resolveReceiver(
  receiver: ReceiverConfig,
  baseDir: string,
): { receiver?: ResolvedReceiver; issues: ReceiverFileIssue[] } {
  const issues: ReceiverFileIssue[] = [];
  let url = receiver.url;
  if (receiver.urlFile !== undefined) {
    const read = readValue(receiver.urlFile, baseDir);
    if (read.problem !== undefined) issues.push({ key: 'urlFile', message: read.problem });
    else if (read.value !== undefined) {
      const problem = receiverUrlProblem(read.value);
      // Its contents are not repeated: a Slack URL is a credential.
      if (problem !== undefined) issues.push({ key: 'urlFile', message: `the URL in ${receiver.urlFile} ${problem}` });
      else url = read.value;
    }
  }
  let secret: string | undefined;
  if ('secretFile' in receiver && receiver.secretFile !== undefined) {
    const read = readValue(receiver.secretFile, baseDir);
    if (read.problem !== undefined) issues.push({ key: 'secretFile', message: read.problem });
    else secret = read.value;
  }
  if (issues.length > 0 || url === undefined) return { issues };
  return { receiver: { url, ...(secret !== undefined ? { secret } : {}) }, issues };
}

/** Problems with the files every route's receiver names, keyed as in phaselog.yaml. */
export function receiverFileIssues(config: NotificationsConfig, baseDir: string): ReceiverFileIssue[] {
  return config.routes.flatMap((route, i) =>
    resolveReceiver(route.receiver, baseDir).issues.map((issue) => ({
      key: `notifications.routes.${i}.receiver.${issue.key}`,
      message: issue.message,
    })),
  );
}
