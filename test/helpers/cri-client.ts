/**
 * A CRI client for the tests, on @grpc/grpc-js with the same proto definitions as the server
 * (host/cri/cri-proto.ts): `call(service, method, request)` resolves with the response object
 * or rejects with the gRPC error (its `code` a grpc status, `details` the message).
 */
import * as grpc from "@grpc/grpc-js";
import { criDefinitions } from "../../host/cri/cri-proto.js";

export type CriService = "runtime" | "image";

export interface CriClient {
  call<T = any>(service: CriService, method: string, request?: object, timeoutMs?: number): Promise<T>;
  /** The gRPC error of a call that must fail (fails the test when it succeeds). */
  fails(service: CriService, method: string, request?: object): Promise<grpc.ServiceError>;
  /** A server-streaming call (GetContainerEvents): its responses as `data` events; `cancel()` ends it from this side. */
  stream(service: CriService, method: string, request?: object): grpc.ClientReadableStream<any>;
  close(): void;
}

export function criClient(socket: string): CriClient {
  const defs = criDefinitions();
  const address = `unix://${socket}`;
  const clients = {
    runtime: new defs.RuntimeClient(address, grpc.credentials.createInsecure()),
    image: new defs.ImageClient(address, grpc.credentials.createInsecure()),
  };
  const call = <T>(service: CriService, method: string, request: object = {}, timeoutMs = 60_000) =>
    new Promise<T>((resolve, reject) => {
      const client = clients[service] as unknown as Record<string, (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: T) => void) => void>;
      if (typeof client[method] !== "function") return reject(new Error(`no CRI method ${service}.${method}`));
      client[method].call(clients[service], request, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  return {
    call,
    async fails(service, method, request = {}) {
      try {
        await call(service, method, request);
      } catch (err) {
        return err as grpc.ServiceError;
      }
      throw new Error(`${service}.${method} succeeded where it should fail`);
    },
    stream(service, method, request = {}) {
      const client = clients[service] as unknown as Record<string, (req: object) => grpc.ClientReadableStream<any>>;
      if (typeof client[method] !== "function") throw new Error(`no CRI method ${service}.${method}`);
      return client[method].call(clients[service], request);
    },
    close() {
      clients.runtime.close();
      clients.image.close();
    },
  };
}

export { grpc };
