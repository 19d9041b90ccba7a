import ipaddr from "ipaddr.js";

/**
 * The outbound address policy: which URLs Relay may call on a tenant's behalf (webhook
 * agents, http tools, the events URL, and any later remote agent or tool). Pure: the URL
 * text and the policy in force in, a verdict out. docs/security.md explains the rules.
 *
 * Addresses are judged as the WHATWG URL parser (the one `fetch` uses) normalises them, so
 * `0x7f000001`, `2130706433`, `127.1`, `0177.0.0.1` and full-width digits are all
 * `127.0.0.1` by the time they are judged; IP literals are then classified by ipaddr.js.
 * Only what the URL names is judged: a public name that resolves to a private address is
 * not caught here (Workers cannot resolve a name before fetching it).
 */

/** Why a URL is refused; the `rule` of an ENDPOINT_NOT_ALLOWED error. */
export const OUTBOUND_RULES = [
  "invalid_url",
  "https_only",
  "no_userinfo",
  "relay_host",
  "local_hostname",
  "internal_hostname",
  "loopback_address",
  "private_address",
  "link_local_address",
  "shared_address",
  "unique_local_address",
  "multicast_address",
  "unspecified_address",
  "reserved_address",
] as const;
export type OutboundRule = (typeof OUTBOUND_RULES)[number];

/** One of Relay's own hosts: a host name or IP, and the port when only that port is Relay's. */
export interface RelayHost {
  hostname: string;
  port: string | null;
}

/** The policy in force for one call or registration. */
export interface OutboundPolicy {
  /**
   * RELAY_ALLOW_LOCAL_ENDPOINTS: `http:` and loopback allowed for this machine, named by a
   * loopback address or `localhost` (local development).
   */
  allowLocal: boolean;
  /** Relay's own hosts: never called, whatever the switch says. */
  relayHosts: readonly RelayHost[];
}

/** A refusal; `local` when the local switch would let the URL through (said in its message). */
export type OutboundRefusal = { ok: false; rule: OutboundRule; message: string; local: boolean };
export type OutboundVerdict = { ok: true; url: URL } | OutboundRefusal;

const refuse = (rule: OutboundRule, message: string, local = false): OutboundRefusal => ({
  ok: false,
  rule,
  message,
  local,
});

/** The host name without the trailing dots DNS allows (`localhost.` is `localhost`). */
const bareName = (hostname: string): string => hostname.replace(/\.+$/, "").toLowerCase();

/**
 * True when a host may be an IPv4 literal: its last label is a number, decimal or hex (the
 * URL standard's "ends in a number" test). Any other host is a domain name; asking ipaddr.js
 * about it costs tens of microseconds for nothing.
 */
const endsInNumber = (name: string): boolean => /^(\d+|0x[0-9a-f]*)$/i.test(name.slice(name.lastIndexOf(".") + 1));

/** The address an IP-literal host name stands for (brackets off for IPv6), or null for a name. */
function ipOf(hostname: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bracketed = hostname.startsWith("[") && hostname.endsWith("]");
  const text = bracketed ? hostname.slice(1, -1) : bareName(hostname);
  if (!bracketed && !endsInNumber(text)) return null;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(text);
  } catch {
    return null;
  }
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
  return address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

const IP_RULES: Record<string, OutboundRule> = {
  loopback: "loopback_address",
  private: "private_address",
  linkLocal: "link_local_address",
  carrierGradeNat: "shared_address",
  uniqueLocal: "unique_local_address",
  multicast: "multicast_address",
  unspecified: "unspecified_address",
};

/** The rule an IP address breaks, or null for a public unicast address. */
export function addressRule(address: ipaddr.IPv4 | ipaddr.IPv6): OutboundRule | null {
  const range = address.range();
  if (range === "unicast") {
    // ipaddr.js calls every IPv6 address outside its special ranges unicast, the unassigned
    // ::/8 too (where the deprecated IPv4-compatible ::127.0.0.1 lives): only 2000::/3 is global.
    if (address.kind() === "ipv6" && !address.match(GLOBAL_UNICAST_V6)) return "reserved_address";
    return null;
  }
  // Broadcast, documentation, benchmarking, 240/4, 6to4, Teredo, NAT64 and the rest.
  return IP_RULES[range] ?? "reserved_address";
}

const describeRule: Record<OutboundRule, string> = {
  invalid_url: "is not a valid URL",
  https_only: "is not https: (only https: endpoints are called)",
  no_userinfo: "carries a user name or password; put credentials in the endpoint's own auth, not the URL",
  relay_host: "is Relay's own host",
  local_hostname: "names this machine or the local network",
  internal_hostname: "names a private (.internal) host",
  loopback_address: "is a loopback address",
  private_address: "is a private network address",
  link_local_address: "is a link-local address",
  shared_address: "is a shared (carrier-grade NAT) address",
  unique_local_address: "is a unique-local IPv6 address",
  multicast_address: "is a multicast address",
  unspecified_address: "is the unspecified address",
  reserved_address: "is in a reserved or special-purpose range",
};

/** The rule a host name breaks by its name alone (not an IP literal). */
function nameRule(name: string): OutboundRule | null {
  if (name === "localhost" || name.endsWith(".localhost") || name.endsWith(".local")) return "local_hostname";
  if (name.endsWith(".internal")) return "internal_hostname";
  return null;
}

const isLoopbackName = (name: string) => name === "localhost" || name.endsWith(".localhost");

/**
 * True for the hosts the local switch opens: a loopback address in any spelling (127.0.0.0/8,
 * ::1, IPv4-mapped 127/8) and the exact name `localhost`. Any other name may point anywhere
 * (/etc/hosts, mDNS, the search domain): `*.local`, `*.localhost` and bare host names are
 * judged as on a deployed Relay, and so are private-network addresses.
 */
const switchOpens = (name: string, ip: ipaddr.IPv4 | ipaddr.IPv6 | null): boolean =>
  ip ? ip.range() === "loopback" : name === "localhost";

/** A host name as compared: bare, and its address when it is an IP literal. */
interface Host {
  name: string;
  ip: ipaddr.IPv4 | ipaddr.IPv6 | null;
}

const hostOf = (hostname: string): Host => ({ name: bareName(hostname), ip: ipOf(hostname) });

/** True for names and addresses of this machine: `localhost`, 127/8, ::1. */
const isLoopback = (host: Host): boolean => (host.ip ? host.ip.range() === "loopback" : isLoopbackName(host.name));

/** The port a URL reaches (its scheme's default when none is written). */
export function effectivePort(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "");
}

function sameHost(a: Host, b: Host): boolean {
  if (a.name === b.name) return true;
  if (isLoopback(a) && isLoopback(b)) return true;
  return a.ip !== null && b.ip !== null && a.ip.kind() === b.ip.kind() && a.ip.toString() === b.ip.toString();
}

/** True when `url` reaches one of Relay's own hosts (every spelling of a loopback host counts as one). */
export function isRelayHost(url: URL, hosts: readonly RelayHost[]): boolean {
  const port = effectivePort(url);
  const target = hostOf(url.hostname);
  return hosts.some((host) => (host.port === null || host.port === port) && sameHost(target, hostOf(host.hostname)));
}

/**
 * Relay's hosts from RELAY_HOSTS: comma-separated `host`, `host:port` or origins
 * (`https://relay.example.com`). A host without a port is Relay's on every port. Unparsable
 * entries are skipped.
 */
export function parseRelayHosts(text: string | undefined): RelayHost[] {
  return (text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .flatMap((entry) => {
      try {
        const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `https://${entry}`);
        const explicitPort = url.port !== "" || /:\d+$/.test(entry);
        return [{ hostname: url.hostname, port: explicitPort ? effectivePort(url) : null }];
      } catch {
        return [];
      }
    });
}

/**
 * The host a request reached Relay at, as one of its own. On a name it is Relay's on every
 * port (http and https both reach a deployed Worker); on an IP or `localhost` only on that
 * port, so a local endpoint beside `wrangler dev` stays callable.
 */
export function requestRelayHost(requestUrl: string): RelayHost {
  const url = new URL(requestUrl);
  const byPort = ipOf(url.hostname) !== null || nameRule(bareName(url.hostname)) === "local_hostname";
  return { hostname: url.hostname, port: byPort ? effectivePort(url) : null };
}

/** Judges one URL against the policy. Never throws. */
export function checkOutboundUrl(text: string, policy: OutboundPolicy): OutboundVerdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("invalid_url", `${JSON.stringify(text.slice(0, 200))} ${describeRule.invalid_url}`);
  }
  const where = url.host;
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return refuse("https_only", `${url.protocol} ${describeRule.https_only}`);
  if (url.username !== "" || url.password !== "") return refuse("no_userinfo", `The URL ${describeRule.no_userinfo}`);
  if (isRelayHost(url, policy.relayHosts))
    return refuse("relay_host", `${where} ${describeRule.relay_host}; Relay does not call itself`);

  const ip = ipOf(url.hostname);
  const name = bareName(url.hostname);
  const rule = ip ? addressRule(ip) : nameRule(name);
  // The switch's exceptions (http:, loopback) hold for this machine alone; whatever else a
  // host is refused for stands, switch or not.
  const local = switchOpens(name, ip);
  const excused = policy.allowLocal && local;
  const onlyLoopback = policy.allowLocal ? "; RELAY_ALLOW_LOCAL_ENDPOINTS opens only loopback and localhost" : "";
  if (rule !== null && !excused) return refuse(rule, `${url.hostname} ${describeRule[rule]}${onlyLoopback}`, local);
  if (url.protocol !== "https:" && !excused)
    return refuse("https_only", `${url.protocol} ${describeRule.https_only}${onlyLoopback}`, local);
  return { ok: true, url };
}

/** The sentence a refusal is reported with: what was refused, by which rule, and how local development gets past it. */
export function refusalMessage(verdict: { message: string; local: boolean }): string {
  const local = verdict.local
    ? " (a local Relay allows it with RELAY_ALLOW_LOCAL_ENDPOINTS=true; a deployed one never does)"
    : "";
  return `${verdict.message}${local}.`;
}
