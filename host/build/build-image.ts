/**
 * The image a build step makes, as Docker's classic builder makes it: the parent's config with
 * the step's configuration as `config`, the configuration the step was probed with (its `Cmd`
 * names the step: `/bin/sh -c #(nop)  ENV A=1`) as `container_config`, one history entry more
 * (`empty_layer` when the step made no layer), and the parent link that the cache follows.
 */
import { digestOfFile } from "../../core/images/blob-store.js";
import type { ContainerConfig, ImageConfig } from "../../core/images/image-config.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { ENGINE_VERSION } from "../../core/version.js";
import { isEmptyTar } from "../storage/diff-file.js";

/** Where a stage stands: the image so far (none for `FROM scratch` before its first step) and its configuration. */
export interface BuildState {
  image: Image | undefined;
  config: ContainerConfig;
  /** From the base image (the host's for scratch). */
  architecture: string;
  os: string;
  variant?: string;
  /** `MAINTAINER`'s name: the image's `author`. */
  author?: string;
}

export interface StepImage {
  /** The configuration the step was probed and recorded with. */
  containerConfig: ContainerConfig;
  /** The new image's configuration (the stage's after the step). */
  config: ContainerConfig;
  /** A layer tar, or undefined for a step that changed no file. */
  layerTar?: string;
  /** The container the step ran in (RUN). */
  containerId?: string;
}

/** The history text of a step: its probe command, joined as Docker joins it. */
const createdBy = (c: ContainerConfig): string => (c.Cmd ?? []).join(" ");

export async function commitStep(images: ImageStore, state: BuildState, step: StepImage): Promise<Image> {
  const tar = step.layerTar && !isEmptyTar(step.layerTar) ? step.layerTar : undefined;
  const diffId = tar ? (await digestOfFile(tar)).digest : undefined;
  const parent = state.image;
  const created = new Date().toISOString();
  const parentConfig: Partial<ImageConfig> = parent?.config ?? {};
  const image: ImageConfig = {
    architecture: state.architecture,
    ...(state.variant ? { variant: state.variant } : {}),
    ...(state.author ? { author: state.author } : {}),
    config: { ...step.config, Image: parent?.id ?? "" },
    container: step.containerId ?? "",
    container_config: { ...step.containerConfig, Image: parent?.id ?? "" },
    created,
    docker_version: ENGINE_VERSION,
    history: [...(parentConfig.history ?? []), { created, ...(state.author ? { author: state.author } : {}), created_by: createdBy(step.containerConfig), ...(diffId ? {} : { empty_layer: true }) }],
    os: state.os,
    rootfs: { type: "layers", diff_ids: [...(parentConfig.rootfs?.diff_ids ?? []), ...(diffId ? [diffId] : [])] },
  };
  return images.commit(Buffer.from(JSON.stringify(image)), parent, tar, []);
}
