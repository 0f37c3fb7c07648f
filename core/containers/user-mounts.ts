/**
 * Which of the runtime's own mounts (/proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys...) a
 * container's own mounts (binds, volumes, tmpfs) replace, by Docker's rule: one at the same
 * destination, and, when the container brings its own /dev, everything under /dev; a /dev/shm
 * shared with other containers (IPC mode `shareable` or `container:`) stays, being the
 * container's own mount in Docker's daemon, not the runtime's.
 */
export function replacedByUserMounts(userDestinations: ReadonlySet<string>, ipcMode: string): (destination: string) => boolean {
  const ownDev = userDestinations.has("/dev");
  const sharedShm = ipcMode === "shareable" || ipcMode.startsWith("container:");
  return (destination) =>
    userDestinations.has(destination) || (ownDev && destination.startsWith("/dev/") && !(destination === "/dev/shm" && sharedShm));
}
