/**
 * A failure to start that the user can fix: the message says what is wrong and how to fix it, and
 * the entry point prints it as one line (no stack trace) and exits non-zero.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}
