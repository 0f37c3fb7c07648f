import type { PluginManifest } from "../../core/contracts/plugin.js";

/** Docker's syslog options, by their plain names (log options are not namespaced). */
export const manifest: PluginManifest = {
  id: "log.syslog",
  kind: "log",
  description:
    "Sends each line of a container's output to a syslog server (unix, unixgram, udp, tcp, tcp+tls; RFC 3164 or 5424), as Docker's syslog driver does. Cannot read back: docker logs reads the daemon's local cache.",
  options: {
    "syslog-address": { description: "Where to send: unix:///path, unixgram:///path, udp://host:port, tcp://host:port, tcp+tls://host:port (port 514 if left out); unset: the local syslog socket (/dev/log)" },
    "syslog-facility": { description: "The facility: kern, user, mail, daemon (default), auth, syslog, lpr, news, uucp, cron, authpriv, ftp, local0-local7, or a number 0-23" },
    "syslog-format": { description: "rfc3164, rfc5424, rfc5424micro; unset: the local format (no hostname)" },
    "syslog-tls-ca-cert": { description: "tcp+tls: the CA that signs the server's certificate (default: the system's)" },
    "syslog-tls-cert": { description: "tcp+tls: the client certificate" },
    "syslog-tls-key": { description: "tcp+tls: the client certificate's key" },
    "syslog-tls-skip-verify": { description: "tcp+tls: do not verify the server (set at all, whatever its value, as Docker reads it)" },
    tag: { description: "The tag (APP-NAME and MSGID in RFC 5424): a template of {{.ID}} (default), {{.FullID}}, {{.Name}}, {{.ImageID}}, {{.ImageFullID}}, {{.ImageName}}, {{.DaemonName}}" },
    labels: { description: "Accepted, as Docker does; syslog messages carry no attributes" },
    "labels-regex": { description: "Accepted, as Docker does; syslog messages carry no attributes" },
    env: { description: "Accepted, as Docker does; syslog messages carry no attributes" },
    "env-regex": { description: "Accepted, as Docker does; syslog messages carry no attributes" },
  },
};
