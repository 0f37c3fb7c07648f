/**
 * The client's stdin into conmon's attach socket (host/containers/attach-socket.ts), read only
 * as fast as the socket takes it; its end (the client closed its stdin) ends the attachment,
 * which closes the process's stdin unless conmon leaves it open.
 */
import type { Readable } from "node:stream";
import type { AttachInput } from "../../containers/attach-socket.js";

/** `closeAtEnd` false: the client's end of input leaves the attachment open for the output. */
export async function pumpInput(stdin: Readable, input: AttachInput, gone: AbortSignal, closeAtEnd = true): Promise<void> {
  try {
    for await (const chunk of stdin) {
      if (gone.aborted) break;
      if (!input.write(chunk as Buffer)) await input.ready();
    }
  } catch {
    // the client's stream broke: its input ends here
  } finally {
    if (closeAtEnd) input.close();
  }
}
