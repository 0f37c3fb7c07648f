/**
 * docker-compose 1.x (Debian 12's is 1.29, through docker-py) asks for the daemon's newest API
 * version and then reads an image's `ContainerConfig` to carry a service's volumes over when it
 * recreates a container (service.py's get_container_data_volumes): a KeyError without it. Docker's
 * daemon leaves the field out from API 1.45, so `docker-compose up` of a changed service fails
 * against Docker 25 and later. Here an image inspect from compose 1.x, known by the User-Agent
 * it sends (`docker-compose/1.<minor> docker-py/<version> ...`), keeps the field at every
 * version; every other client gets Docker's answer.
 */
const COMPOSE_V1 = /^docker-compose\/1\.\d+/;

export function isComposeV1(userAgent: string | undefined): boolean {
  return userAgent !== undefined && COMPOSE_V1.test(userAgent);
}
