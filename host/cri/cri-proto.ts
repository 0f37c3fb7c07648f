/**
 * The CRI's service definitions, loaded from proto/runtime-v1.proto (beside the sources; the
 * compiled module finds it from dist/). Messages are plain objects: field names in camelCase,
 * enums as their names, 64-bit integers as decimal strings (nanosecond times do not fit a JS
 * number), every field present with its default (a message field unset is null). engined's
 * server and the tests' client load the same definitions, so both speak the same shape.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/** The proto file: next to this module in the sources, or found from dist/host/cri/. */
export function protoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, "proto", "runtime-v1.proto"), resolve(here, "../../../host/cri/proto/runtime-v1.proto")];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`the CRI's proto file is missing (looked at ${candidates.join(", ")})`);
  return found;
}

export const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, arrays: true, objects: true };

export interface CriDefinitions {
  runtime: grpc.ServiceDefinition;
  image: grpc.ServiceDefinition;
  /** Client constructors, for the tests' client and tools. */
  RuntimeClient: grpc.ServiceClientConstructor;
  ImageClient: grpc.ServiceClientConstructor;
}

let loaded: CriDefinitions | undefined;

export function criDefinitions(): CriDefinitions {
  if (loaded) return loaded;
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath(), LOADER_OPTIONS)) as unknown as {
    runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor; ImageService: grpc.ServiceClientConstructor } };
  };
  const { RuntimeService, ImageService } = pkg.runtime.v1;
  loaded = { runtime: RuntimeService.service, image: ImageService.service, RuntimeClient: RuntimeService, ImageClient: ImageService };
  return loaded;
}
