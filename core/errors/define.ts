/** What an entry of the error catalogue is (core/errors.ts): a code, an HTTP status, a message. */

export class EngineError extends Error {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EngineError";
  }
}

export interface ErrorDefinition<A extends unknown[]> {
  readonly code: string;
  readonly statusCode: number;
  /** Makes the error; the arguments fill the message. */
  (...args: A): EngineError;
}

export function define<A extends unknown[]>(
  code: string,
  statusCode: number,
  message: (...args: A) => string,
): ErrorDefinition<A> {
  const make = (...args: A) => new EngineError(code, statusCode, message(...args));
  return Object.assign(make, { code, statusCode }) as ErrorDefinition<A>;
}
