/**
 * A CRI container's stop signal (k8s.io/cri-api's `Signal` enum, KEP-4960): the one the kubelet
 * gives in ContainerConfig.stop_signal, else the image's STOPSIGNAL, else SIGTERM, the order
 * containerd and CRI-O follow. StopContainer sends it (before SIGKILL once the timeout ends) and
 * ContainerStatus.stop_signal reports it.
 *
 * The enum's names are not all names the runtime's kill knows (SIGRTMINPLUS3, SIGCLD): the
 * signal goes to it as its Linux number.
 */
import { errors } from "../../../core/errors.js";

/** Linux's numbers of the enum's names other than the real-time ones. */
const NUMBERS: Readonly<Record<string, number>> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGIOT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9, SIGUSR1: 10,
  SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSTKFLT: 16, SIGCHLD: 17, SIGCLD: 17, SIGCONT: 18,
  SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22, SIGURG: 23, SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27,
  SIGWINCH: 28, SIGIO: 29, SIGPOLL: 29, SIGPWR: 30, SIGSYS: 31,
};
/** glibc's SIGRTMIN and SIGRTMAX (the kernel's 32 and 33 are the C library's own), as runc and Docker number them. */
const RTMIN = 34;
const RTMAX = 64;

/** The Linux number of a `Signal` name, or undefined for RUNTIME_DEFAULT and names the enum lacks. */
export function signalNumber(name: string): number | undefined {
  if (name in NUMBERS) return NUMBERS[name];
  if (name === "SIGRTMIN") return RTMIN;
  if (name === "SIGRTMAX") return RTMAX;
  const rt = /^SIGRT(MINPLUS|MAXMINUS)([1-9]|1[0-5])$/.exec(name);
  if (!rt) return undefined;
  const n = Number(rt[2]);
  if (rt[1] === "MAXMINUS" && n > 14) return undefined;
  return rt[1] === "MINPLUS" ? RTMIN + n : RTMAX - n;
}

/** The `Signal` name of a Linux number (the first name the enum gives it: SIGABRT, not SIGIOT). */
function nameOfNumber(n: number): string | undefined {
  const plain = Object.entries(NUMBERS).find(([, v]) => v === n);
  if (plain) return plain[0];
  if (n === RTMIN) return "SIGRTMIN";
  if (n === RTMAX) return "SIGRTMAX";
  if (n > RTMIN && n <= RTMIN + 15) return `SIGRTMINPLUS${n - RTMIN}`;
  if (n < RTMAX && n >= RTMAX - 14) return `SIGRTMAXMINUS${RTMAX - n}`;
  return undefined;
}

/** An image's STOPSIGNAL ("SIGQUIT", "QUIT", "3", "SIGRTMIN+3", "RTMAX-1") as a `Signal` name, if it is one. */
export function imageSignalName(stopSignal: string | undefined): string | undefined {
  if (!stopSignal) return undefined;
  if (/^\d+$/.test(stopSignal)) return nameOfNumber(Number(stopSignal));
  const name = stopSignal.toUpperCase().startsWith("SIG") ? stopSignal.toUpperCase() : `SIG${stopSignal.toUpperCase()}`;
  const rt = /^SIGRT(MIN|MAX)([+-])(\d+)$/.exec(name);
  if (rt) return nameOfNumber((rt[1] === "MIN" ? RTMIN : RTMAX) + (rt[2] === "+" ? 1 : -1) * Number(rt[3]));
  return signalNumber(name) === undefined ? undefined : name;
}

/** CreateContainer's stop_signal checked: RUNTIME_DEFAULT (or none) or a name of the enum. */
export function checkStopSignal(value: string | number | undefined): void {
  if (value === undefined || value === "RUNTIME_DEFAULT") return;
  if (typeof value !== "string" || signalNumber(value) === undefined) {
    throw errors.criInvalidArgument("config.stop_signal", `${JSON.stringify(value)} is not a signal of the Signal enum`);
  }
}

/** The container's stop signal as a `Signal` name: the kubelet's, else the image's, else SIGTERM. */
export function effectiveStopSignal(configured: string | undefined, imageStopSignal: string | undefined): string {
  if (configured && configured !== "RUNTIME_DEFAULT" && signalNumber(configured) !== undefined) return configured;
  return imageSignalName(imageStopSignal) ?? "SIGTERM";
}
