/** An error a route handler throws to answer with a status and an API-shaped error body. */
export class EmulatorHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields merged into the error body (e.g. GitHub's `errors`, Google's `details`). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'EmulatorHttpError';
  }
}
