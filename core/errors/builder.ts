/** The error catalogue, the image builder's steps (`POST /build`; core/errors.ts assembles it). */
import { define, EngineError } from "./define.js";

/** A failed RUN: Docker's message, and the command's exit code for the stream's `errorDetail.code`. */
class RunFailedError extends EngineError {
  constructor(readonly exitCode: number, message: string) {
    super("ENGINE_ERR_BUILD_RUN_FAILED", 400, message);
  }
}

export const builderErrors = {
  buildRunFailed: Object.assign((command: string, code: number) => new RunFailedError(code, `The command '${command}' returned a non-zero code: ${code}`), {
    code: "ENGINE_ERR_BUILD_RUN_FAILED",
    statusCode: 400,
  }),
  buildNoImage: define("ENGINE_ERR_BUILD_NO_IMAGE", 400, () => "No image was generated. Is your Dockerfile empty?"),
  buildCopyNotFound: define(
    "ENGINE_ERR_BUILD_COPY_NOT_FOUND",
    400,
    (instruction: string, path: string) => `${instruction} failed: file not found in build context or excluded by .dockerignore: stat ${path}: file does not exist`,
  ),
  buildCopyOutsideContext: define(
    "ENGINE_ERR_BUILD_COPY_OUTSIDE_CONTEXT",
    400,
    (instruction: string, path: string) => `${instruction} failed: forbidden path outside the build context: ${path} ()`,
  ),
  buildCopyDestNotDir: define(
    "ENGINE_ERR_BUILD_COPY_DEST_NOT_DIR",
    400,
    (instruction: string) => `When using ${instruction} with more than one source file, the destination must be a directory and end with a /`,
  ),
  buildCopyFailed: define("ENGINE_ERR_BUILD_COPY_FAILED", 400, (instruction: string, why: string) => `${instruction} failed: ${why}`),
  buildAddUrlFailed: define("ENGINE_ERR_BUILD_ADD_URL_FAILED", 400, (why: string) => `ADD failed: ${why}`),
  buildNoSourceImage: define("ENGINE_ERR_BUILD_NO_SOURCE_IMAGE", 400, (instruction: string) => `Please provide a source image with \`from\` prior to ${instruction.toLowerCase()}`),
  buildInvalidFrom: define("ENGINE_ERR_BUILD_INVALID_FROM", 400, (value: string, why: string) => `invalid from flag value ${value}: ${why}`),
  buildInvalidChown: define("ENGINE_ERR_BUILD_INVALID_CHOWN", 400, (why: string) => `unable to convert uid/gid chown string to host mapping: ${why}`),
  buildInvalidChmod: define("ENGINE_ERR_BUILD_INVALID_CHMOD", 400, (value: string) => `invalid chmod parameter: ${value}`),
  buildInvalidInstruction: define("ENGINE_ERR_BUILD_INVALID_INSTRUCTION", 400, (why: string) => why),
  buildInvalidOption: define("ENGINE_ERR_BUILD_INVALID_OPTION", 400, (option: string, why: string) => `invalid ${option}: ${why}`),
  buildCancelled: define("ENGINE_ERR_BUILD_CANCELLED", 400, () => "the build was cancelled: the client closed the connection"),
} as const;
