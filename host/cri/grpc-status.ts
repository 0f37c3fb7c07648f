/**
 * A thrown error as the gRPC status a CRI client reads: the catalogue's HTTP status mapped to
 * the gRPC code kubelet and crictl act on (NotFound makes a kubelet treat an object as gone;
 * InvalidArgument is not retried), the message as the status detail.
 */
import { status as Status, type ServiceError, Metadata } from "@grpc/grpc-js";
import { errors, toEngineError } from "../../core/errors.js";

function codeOf(statusCode: number, code: string): Status {
  if (code === errors.criNameInUse.code) return Status.ALREADY_EXISTS;
  switch (statusCode) {
    case 400:
      return Status.INVALID_ARGUMENT;
    case 401:
      return Status.UNAUTHENTICATED;
    case 403:
      return Status.PERMISSION_DENIED;
    case 404:
      return Status.NOT_FOUND;
    case 409:
      return Status.FAILED_PRECONDITION;
    case 429:
      return Status.RESOURCE_EXHAUSTED;
    case 501:
      return Status.UNIMPLEMENTED;
    case 503:
      return Status.UNAVAILABLE;
    default:
      return Status.INTERNAL;
  }
}

export function toGrpcError(err: unknown): Partial<ServiceError> {
  const given = (err as { grpcCode?: Status }).grpcCode;
  if (given !== undefined) return { code: given, details: (err as Error).message };
  const e = toEngineError(err);
  const metadata = new Metadata();
  metadata.set("engine-error-code", e.code);
  return { code: codeOf(e.statusCode, e.code), details: e.message, metadata };
}
