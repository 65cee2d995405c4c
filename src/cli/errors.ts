/** Exit codes of the `phaselog` CLI (documented in the README). */
export const EXIT = {
  ok: 0,
  /** `gate`: the phase did not hold the status for the window. */
  gateFailed: 1,
  /** Bad command line, bad time or duration, invalid input. */
  usage: 2,
  /** The server could not be reached or failed. */
  server: 3,
  /** The phase, cluster or token named does not exist. */
  notFound: 4,
  /** Missing or insufficient token. */
  auth: 5,
} as const;

/** An error the CLI reports as one line and exits with `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Print a one-line error for the user and exit; never a stack trace for an expected failure. */
export function exitWithError(message: string, code: number): never {
  process.stderr.write(`phaselog: ${message}\n`);
  process.exit(code);
}
