/**
 * The `none` log driver: a container's output is not stored anywhere. It has no `read`
 * capability, so `docker logs` gets Docker's 501 `configured logging driver does not support
 * reading`; attach does not go through the log driver when it cannot read (the daemon follows
 * the supervisor's spool then), so `docker run` without `-d` still shows the output.
 */
import type { LogDriver, LogWriter } from "../../core/contracts/log.js";

const DRIVER_NAME = "none";

/** A logger that drops every message; writes after close are refused as the contract says. */
export function createNoneLogger(containerId: string): LogWriter {
  let isClosed = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((res) => (markClosed = res));
  return {
    write() {
      if (isClosed) return Promise.reject(new Error(`none: the logger of container ${containerId} is closed`));
    },
    close() {
      isClosed = true;
      markClosed();
      return closed;
    },
    closed,
  };
}

export function createNoneLogDriver(): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: [],
    // Docker's daemon skips option checks for `none` (its CLI refuses options itself, before
    // any request): a container made through the API with options is accepted and keeps them.
    validateOptions: () => {},
    createLogger: (ctx) => createNoneLogger(ctx.containerId),
  };
}
