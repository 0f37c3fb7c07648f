/**
 * The CRI's gRPC server on its unix socket (`<exec-root>/cri.sock`: 0660, the API socket's
 * group, a stale socket from a crash replaced, a live one an error). Each service is a table
 * of async handlers, one per call; a handler's throw becomes the gRPC status of
 * grpc-status.ts, and every failed call is logged at debug level with its code.
 */
import { rmSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import { clearStaleSocket, setSocketAccess } from "../listeners/unix-socket.js";
import { criDefinitions } from "./cri-proto.js";
import { toGrpcError } from "./grpc-status.js";

/**
 * A call's handler: the decoded request in, the response object out; `call.cancelled` (when
 * given) is aborted when the client cancels the call or its deadline passes.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CriHandler = (request: any, call?: { cancelled: AbortSignal }) => Promise<object>;
export type CriHandlers = Record<string, CriHandler>;
/** A server-streaming call's handler: writes to the stream, ends it, or leaves it open. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CriStreamHandler = (request: any, call: grpc.ServerWritableStream<unknown, object>) => void;
export type CriStreamHandlers = Record<string, CriStreamHandler>;

export interface CriServerOptions {
  socket: string;
  group: string;
  groupGiven: boolean;
  log: Logger;
  runtime: CriHandlers;
  /** The RuntimeService's server-streaming calls (GetContainerEvents). */
  runtimeStreams: CriStreamHandlers;
  image: CriHandlers;
  /** Called first when the server closes: streams never end by themselves, so they are ended here. */
  beforeClose?: () => void;
}

export interface CriServer {
  socket: string;
  close(): Promise<void>;
}

function implementation(definition: grpc.ServiceDefinition, handlers: CriHandlers, streams: CriStreamHandlers, log: Logger): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const name of Object.keys(definition)) {
    if (definition[name].responseStream) {
      const stream = streams[name];
      impl[name] = ((call: grpc.ServerWritableStream<unknown, object>) => {
        if (stream) return stream(call.request, call);
        call.emit("error", Object.assign(new Error(`${name} is not implemented by this runtime yet`), { code: grpc.status.UNIMPLEMENTED }));
      }) as grpc.UntypedHandleCall;
      continue;
    }
    const handler: CriHandler =
      handlers[name] ?? (() => Promise.reject(Object.assign(new Error(`${name} is not implemented by this runtime yet`), { grpcCode: grpc.status.UNIMPLEMENTED })));
    impl[name] = ((call: grpc.ServerUnaryCall<unknown, object>, callback: grpc.sendUnaryData<object>) => {
      // a call the client gave up on (cancelled, deadline passed) stops the work it started
      const cancelled = new AbortController();
      call.once("cancelled", () => cancelled.abort(Object.assign(new Error(`${name}: the call was cancelled`), { grpcCode: grpc.status.CANCELLED })));
      handler(call.request, { cancelled: cancelled.signal }).then(
        (response) => callback(null, response),
        (err: unknown) => {
          const status = toGrpcError(err);
          log.debug({ call: name, code: grpc.status[status.code ?? grpc.status.INTERNAL], err: status.details }, "CRI call failed");
          callback(status, null);
        },
      );
    }) as grpc.UntypedHandleCall;
  }
  return impl;
}

export async function serveCri(opts: CriServerOptions): Promise<CriServer> {
  const defs = criDefinitions();
  const server = new grpc.Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024, "grpc.max_send_message_length": 16 * 1024 * 1024 });
  server.addService(defs.runtime, implementation(defs.runtime, opts.runtime, opts.runtimeStreams, opts.log));
  server.addService(defs.image, implementation(defs.image, opts.image, {}, opts.log));
  await clearStaleSocket(opts.socket);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${opts.socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  try {
    setSocketAccess(opts.socket, opts.group, opts.groupGiven, opts.log);
  } catch (err) {
    server.forceShutdown();
    rmSync(opts.socket, { force: true });
    throw err;
  }
  return {
    socket: opts.socket,
    close: async () => {
      opts.beforeClose?.();
      // Calls under way (a pull) get a moment to finish; then the rest are cut.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      rmSync(opts.socket, { force: true });
    },
  };
}
