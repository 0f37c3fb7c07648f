/** The error catalogue, Dockerfile builds (core/errors.ts assembles it). Docker's messages, word for word. */
import { define } from "./define.js";

export const buildErrors = {
  // --- the Dockerfile (core/build/dockerfile-parse.ts) ---
  buildDockerfileEmpty: define("ENGINE_ERR_BUILD_DOCKERFILE_EMPTY", 400, (name: string) => `the Dockerfile (${name}) cannot be empty`),
  // Errors of the line parser (directives, continuation lines, each keyword's argument syntax):
  // Docker names no line for these.
  buildDockerfileParse: define("ENGINE_ERR_BUILD_DOCKERFILE_PARSE", 400, (name: string, why: string) => `failed to parse ${name}: ${why}`),
  // Docker 28's words (BuildKit's parser): "on line"; 20.10 wrote "dockerfile parse error line N".
  // `why`: "unknown instruction: <as written>[ (did you mean <KEYWORD>?)]".
  buildUnknownInstruction: define("ENGINE_ERR_BUILD_UNKNOWN_INSTRUCTION", 400, (line: number, why: string) => `dockerfile parse error on line ${line}: ${why}`),
  // Errors of an instruction's arguments and flags (counts, names, flag values).
  buildInstructionInvalid: define("ENGINE_ERR_BUILD_INSTRUCTION_INVALID", 400, (line: number, why: string) => `dockerfile parse error on line ${line}: ${why}`),
  // A flag the classic builder's parser takes and its executor refuses (RUN's: Docker 28's dispatchRun).
  buildRequiresBuildKit: define(
    "ENGINE_ERR_BUILD_REQUIRES_BUILDKIT",
    400,
    (flag: string) => `the --${flag} option requires BuildKit. Refer to https://docs.docker.com/go/buildkit/ to learn how to build images with BuildKit enabled`,
  ),
  buildNoStage: define("ENGINE_ERR_BUILD_NO_STAGE", 400, () => "no build stage in current context"),
  // An ONBUILD trigger run by a child build: Docker's bare message, no line.
  buildTriggerInvalid: define("ENGINE_ERR_BUILD_TRIGGER_INVALID", 400, (why: string) => why),
  buildTargetNotFound: define("ENGINE_ERR_BUILD_TARGET_NOT_FOUND", 400, (target: string) => `failed to reach build target ${target} in Dockerfile`),

  // --- variable substitution (core/build/shell-lex.ts); `word` is already Go-quoted ---
  buildSubstitution: define("ENGINE_ERR_BUILD_SUBSTITUTION", 400, (quotedWord: string, why: string) => `failed to process ${quotedWord}: ${why}`),

  // --- .dockerignore (core/build/dockerignore.ts) ---
  buildIgnorePattern: define("ENGINE_ERR_BUILD_IGNORE_PATTERN", 400, (why: string) => why),
} as const;
