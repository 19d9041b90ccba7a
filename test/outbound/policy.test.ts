import { describe, expect, it } from "vitest";
import {
  checkOutboundUrl,
  type OutboundPolicy,
  type OutboundRule,
  parseRelayHosts,
  refusalMessage,
  requestRelayHost,
} from "../../src/outbound/policy";

/**
 * The outbound address policy as a table: every spelling of a non-public address is refused
 * by the rule it breaks, public addresses and names pass. The URLs are parsed by workerd's
 * own URL parser (these tests run in workerd), the one `fetch` uses.
 */

const deployed: OutboundPolicy = { allowLocal: false, relayHosts: parseRelayHosts("relay.example.com") };
const local: OutboundPolicy = { allowLocal: true, relayHosts: parseRelayHosts("127.0.0.1:8787") };

const ruleOf = (url: string, policy = deployed): OutboundRule | "allowed" => {
  const verdict = checkOutboundUrl(url, policy);
  return verdict.ok ? "allowed" : verdict.rule;
};

describe("IPv4 in every spelling", () => {
  const loopback = [
    "https://127.0.0.1/",
    "https://127.0.0.1:8787/health",
    "https://127.1/",
    "https://0x7f000001/",
    "https://0X7F000001/",
    "https://2130706433/",
    "https://017700000001/",
    "https://0177.0.0.1/",
    "https://0x7f.0.0.1/",
    "https://0x7f.1/",
    "https://127.0.0.1./",
    "https://127.255.255.254/",
    "https://①②⑦.0.0.1/",
    "https://%31%32%37.0.0.1/",
  ];
  it.each(loopback)("%s is loopback", (url) => expect(ruleOf(url)).toBe("loopback_address"));

  const ranges: [string, OutboundRule][] = [
    ["https://0.0.0.0/", "unspecified_address"],
    ["https://0/", "unspecified_address"],
    ["https://0.1.2.3/", "unspecified_address"],
    ["https://10.0.0.1/", "private_address"],
    ["https://10.255.255.255/", "private_address"],
    ["https://172.16.0.1/", "private_address"],
    ["https://172.31.255.255/", "private_address"],
    ["https://192.168.1.1/", "private_address"],
    ["https://0xc0a80101/", "private_address"],
    ["https://169.254.169.254/latest/meta-data/", "link_local_address"],
    ["https://2852039166/", "link_local_address"],
    ["https://100.64.0.1/", "shared_address"],
    ["https://100.127.255.254/", "shared_address"],
    ["https://224.0.0.1/", "multicast_address"],
    ["https://239.255.255.250/", "multicast_address"],
    ["https://192.0.0.1/", "reserved_address"],
    ["https://192.0.2.1/", "reserved_address"],
    ["https://198.18.0.1/", "reserved_address"],
    ["https://198.19.255.255/", "reserved_address"],
    ["https://198.51.100.7/", "reserved_address"],
    ["https://203.0.113.9/", "reserved_address"],
    ["https://240.0.0.1/", "reserved_address"],
    ["https://255.255.255.255/", "reserved_address"],
  ];
  it.each(ranges)("%s → %s", (url, rule) => expect(ruleOf(url)).toBe(rule));

  it("passes public addresses, at the edges of the refused ranges too", () => {
    for (const url of [
      "https://1.1.1.1/",
      "https://8.8.8.8/",
      "https://172.15.255.255/",
      "https://172.32.0.1/",
      "https://100.63.255.255/",
      "https://100.128.0.1/",
      "https://198.17.255.255/",
      "https://198.20.0.1/",
      "https://223.255.255.254/",
      "https://11.0.0.1/",
    ])
      expect(ruleOf(url), url).toBe("allowed");
  });
});

describe("IPv6", () => {
  const ranges: [string, OutboundRule][] = [
    ["https://[::1]/", "loopback_address"],
    ["https://[0:0:0:0:0:0:0:1]/", "loopback_address"],
    ["https://[::]/", "unspecified_address"],
    ["https://[::ffff:127.0.0.1]/", "loopback_address"],
    ["https://[::ffff:7f00:1]/", "loopback_address"],
    ["https://[0:0:0:0:0:ffff:7f00:1]/", "loopback_address"],
    ["https://[::ffff:10.0.0.1]/", "private_address"],
    ["https://[::ffff:169.254.169.254]/", "link_local_address"],
    ["https://[::ffff:0.0.0.0]/", "unspecified_address"],
    ["https://[::127.0.0.1]/", "reserved_address"],
    ["https://[fe80::1]/", "link_local_address"],
    ["https://[febf::1]/", "link_local_address"],
    ["https://[fc00::1]/", "unique_local_address"],
    ["https://[fd12:3456::1]/", "unique_local_address"],
    ["https://[ff02::1]/", "multicast_address"],
    ["https://[ff05::2]/", "multicast_address"],
    ["https://[fec0::1]/", "reserved_address"],
    ["https://[64:ff9b::7f00:1]/", "reserved_address"],
    ["https://[2002:7f00:1::]/", "reserved_address"],
    ["https://[2001::1]/", "reserved_address"],
    ["https://[2001:db8::1]/", "reserved_address"],
    ["https://[100::1]/", "reserved_address"],
  ];
  it.each(ranges)("%s → %s", (url, rule) => expect(ruleOf(url)).toBe(rule));

  it("passes global unicast addresses, IPv4-mapped public ones too", () => {
    for (const url of [
      "https://[2606:4700:4700::1111]/",
      "https://[2a00:1450:4001::200e]/",
      "https://[::ffff:8.8.8.8]/",
    ])
      expect(ruleOf(url), url).toBe("allowed");
  });
});

describe("names", () => {
  const names: [string, OutboundRule][] = [
    ["https://localhost/", "local_hostname"],
    ["https://localhost:22/", "local_hostname"],
    ["https://LOCALHOST./", "local_hostname"],
    ["https://%6cocalhost/", "local_hostname"],
    ["https://ｌｏｃａｌｈｏｓｔ/", "local_hostname"],
    ["https://app.localhost/", "local_hostname"],
    ["https://printer.local/", "local_hostname"],
    ["https://metadata.google.internal/computeMetadata/v1/", "internal_hostname"],
    ["https://metadata.google.internal./", "internal_hostname"],
    ["https://db.corp.internal/", "internal_hostname"],
  ];
  it.each(names)("%s → %s", (url, rule) => expect(ruleOf(url)).toBe(rule));

  it("passes public names, ones that merely contain a refused word too", () => {
    for (const url of [
      "https://example.com/hook",
      "https://hooks.example.com:8443/agent?x=1",
      "https://localhost.example.com/",
      "https://internal.example.com/",
      "https://my-local.dev/",
      "https://xn--bcher-kva.example/",
    ])
      expect(ruleOf(url), url).toBe("allowed");
  });
});

describe("scheme, credentials and Relay's own host", () => {
  it("takes https only, and never a user name or password", () => {
    expect(ruleOf("http://example.com/")).toBe("https_only");
    expect(ruleOf("ftp://example.com/")).toBe("https_only");
    expect(ruleOf("https://user:pass@example.com/")).toBe("no_userinfo");
    expect(ruleOf("https://user@example.com/")).toBe("no_userinfo");
    expect(ruleOf("https://:pass@example.com/")).toBe("no_userinfo");
    expect(ruleOf("not a url")).toBe("invalid_url");
    // A host that ends in a number is an IPv4 address or no host at all (the URL standard).
    expect(ruleOf("https://1.2.3.256/")).toBe("invalid_url");
    expect(ruleOf("https://hooks.0x7f/")).toBe("invalid_url");
  });

  it("refuses Relay's own host on any port when it is a name, on its port when it is local", () => {
    expect(ruleOf("https://relay.example.com/v1/webhooks/demo")).toBe("relay_host");
    expect(ruleOf("https://RELAY.example.com.:8443/")).toBe("relay_host");
    expect(ruleOf("https://api.relay.example.com/")).toBe("allowed");
    expect(ruleOf("http://127.0.0.1:8787/health", local)).toBe("relay_host");
    expect(ruleOf("http://localhost:8787/v1/webhooks/demo", local)).toBe("relay_host");
    expect(ruleOf("http://[::1]:8787/", local)).toBe("relay_host");
    expect(ruleOf("http://0x7f000001:8787/", local)).toBe("relay_host");
    expect(ruleOf("http://127.0.0.1:9000/agent", local)).toBe("allowed");
  });

  it("counts the host a request came in at: by name on every port, by local address on its port", () => {
    expect(requestRelayHost("https://relay.example.com/v1/agents/x")).toEqual({
      hostname: "relay.example.com",
      port: null,
    });
    expect(requestRelayHost("http://127.0.0.1:8787/v1/agents/x")).toEqual({ hostname: "127.0.0.1", port: "8787" });
    expect(requestRelayHost("http://localhost/v1")).toEqual({ hostname: "localhost", port: "80" });
    const hosts = [requestRelayHost("http://relay.test/v1/agents/x")];
    expect(ruleOf("https://relay.test/v1/webhooks/demo", { allowLocal: false, relayHosts: hosts })).toBe("relay_host");
  });

  it("reads RELAY_HOSTS as hosts, host:port or origins, skipping what does not parse", () => {
    expect(parseRelayHosts(" relay.example.com, https://relay.acme.workers.dev ,127.0.0.1:8787,[::1]:9,, :: ")).toEqual(
      [
        { hostname: "relay.example.com", port: null },
        { hostname: "relay.acme.workers.dev", port: null },
        { hostname: "127.0.0.1", port: "8787" },
        { hostname: "[::1]", port: "9" },
      ],
    );
    expect(parseRelayHosts("relay.example.com:443")).toEqual([{ hostname: "relay.example.com", port: "443" }]);
    expect(parseRelayHosts(undefined)).toEqual([]);
  });
});

describe("the local switch (RELAY_ALLOW_LOCAL_ENDPOINTS)", () => {
  /** The deployed policy with the local one's own hosts: what the switch must not change. */
  const deployedHere: OutboundPolicy = { ...local, allowLocal: false };

  // This machine in every spelling the URL parser and ipaddr.js accept: 127.0.0.0/8, ::1,
  // IPv4-mapped 127/8, and the exact name localhost (trailing dots, case and encodings included).
  const thisMachine = [
    "http://127.0.0.1:9000/agent",
    "http://127.1:9000/",
    "http://0x7f000001:9000/",
    "http://0X7F000001:9000/",
    "http://2130706433:9000/",
    "http://017700000001:9000/",
    "http://0177.0.0.1:9000/",
    "http://0x7f.0.0.1:9000/",
    "http://0x7f.1:9000/",
    "http://127.0.0.1.:9000/",
    "http://127.255.255.254:9000/",
    "http://①②⑦.0.0.1:9000/",
    "http://%31%32%37.0.0.1:9000/",
    "http://[::1]:9000/",
    "http://[0:0:0:0:0:0:0:1]:9000/",
    "http://[::ffff:127.0.0.1]:9000/",
    "http://[::ffff:7f00:1]:9000/",
    "http://[0:0:0:0:0:ffff:7f00:1]:9000/",
    "http://[::ffff:127.9.9.9]:9000/",
    "http://localhost:9000/",
    "http://localhost/",
    "http://LOCALHOST.:9000/",
    "http://%6cocalhost:9000/",
    "http://ｌｏｃａｌｈｏｓｔ:9000/",
    "https://localhost:9443/",
    "https://127.0.0.1/",
    "https://[::1]/",
  ];
  it.each(thisMachine)("lets %s through (this machine), which a deployed Relay refuses", (url) => {
    expect(ruleOf(url, local)).toBe("allowed");
    expect(["loopback_address", "local_hostname"]).toContain(ruleOf(url, deployedHere));
  });

  // Everything else is judged as on a deployed Relay: names that may point at this machine
  // (/etc/hosts, mDNS, .localhost), the local network, and public names over http:.
  const notThisMachine: [string, OutboundRule][] = [
    ["http://10.0.0.1/", "private_address"],
    ["http://172.16.0.1/", "private_address"],
    ["http://192.168.1.20:3000/", "private_address"],
    ["https://192.168.1.20/", "private_address"],
    ["http://0xc0a80101/", "private_address"],
    ["http://[::ffff:192.168.1.20]/", "private_address"],
    ["http://[fd00::1]/", "unique_local_address"],
    ["https://[fc00::1]:9000/", "unique_local_address"],
    ["http://printer.local/", "local_hostname"],
    ["https://printer.local/", "local_hostname"],
    ["http://app.localhost:9000/", "local_hostname"],
    ["https://app.localhost/", "local_hostname"],
    ["http://localhost.localhost:9000/", "local_hostname"],
    ["http://myhost:9000/", "https_only"],
    ["http://localhost.localdomain:9000/", "https_only"],
    ["http://localhost.example.com/", "https_only"],
    ["http://example.com/", "https_only"],
    ["http://[::127.0.0.1]:9000/", "reserved_address"],
    ["http://[64:ff9b::7f00:1]/", "reserved_address"],
    ["http://[2002:7f00:1::]/", "reserved_address"],
    ["http://169.254.169.254/", "link_local_address"],
    ["http://[fe80::1]/", "link_local_address"],
    ["http://metadata.google.internal/", "internal_hostname"],
    ["http://0.0.0.0:8787/", "unspecified_address"],
    ["http://[::]/", "unspecified_address"],
    ["http://224.0.0.1/", "multicast_address"],
    ["http://240.0.0.1/", "reserved_address"],
    ["http://100.64.0.1/", "shared_address"],
    ["http://user:pass@127.0.0.1:9000/", "no_userinfo"],
    ["ftp://127.0.0.1/", "https_only"],
  ];
  it.each(notThisMachine)("refuses %s (%s), as a deployed Relay does", (url, rule) => {
    expect(ruleOf(url, local)).toBe(rule);
    expect(ruleOf(url, deployedHere)).toBe(rule);
  });

  it("passes public names over https:, bare host names too, as a deployed Relay does", () => {
    for (const url of ["https://example.com/hook", "https://myhost/", "https://localhost.localdomain/"]) {
      expect(ruleOf(url, local), url).toBe("allowed");
      expect(ruleOf(url, deployedHere), url).toBe("allowed");
    }
  });

  it("still refuses Relay's own port on this machine, in every spelling", () => {
    for (const url of [
      "http://127.0.0.1:8787/health",
      "http://127.1:8787/",
      "http://2130706433:8787/",
      "http://[::1]:8787/",
      "http://[::ffff:127.0.0.1]:8787/",
      "http://[::ffff:7f00:1]:8787/",
      "http://localhost:8787/v1/webhooks/demo",
      "http://LOCALHOST.:8787/",
      "https://localhost:8787/",
    ])
      expect(ruleOf(url, local), url).toBe("relay_host");
  });

  it("names the switch in the message only for what it would let through, and says what it opens when on", () => {
    const refused = (url: string, policy = deployed) => {
      const verdict = checkOutboundUrl(url, policy);
      if (verdict.ok) throw new Error(`${url} was allowed`);
      return refusalMessage(verdict);
    };
    const hint = " (a local Relay allows it with RELAY_ALLOW_LOCAL_ENDPOINTS=true; a deployed one never does).";
    expect(refused("https://127.0.0.1/")).toBe(`127.0.0.1 is a loopback address${hint}`);
    expect(refused("http://localhost:9000/")).toBe(`localhost names this machine or the local network${hint}`);
    expect(refused("https://169.254.169.254/")).toBe("169.254.169.254 is a link-local address.");
    expect(refused("http://192.168.1.20/")).toBe("192.168.1.20 is a private network address.");
    expect(refused("https://printer.local/")).toBe("printer.local names this machine or the local network.");
    expect(refused("http://example.com/")).toBe("http: is not https: (only https: endpoints are called).");
    expect(refused("ftp://127.0.0.1/")).toBe("ftp: is not https: (only https: endpoints are called).");
    const opens = "; RELAY_ALLOW_LOCAL_ENDPOINTS opens only loopback and localhost.";
    expect(refused("http://192.168.1.20/", local)).toBe(`192.168.1.20 is a private network address${opens}`);
    expect(refused("http://myhost:9000/", local)).toBe(
      `http: is not https: (only https: endpoints are called)${opens}`,
    );
    expect(refused("http://127.0.0.1:8787/", local)).toBe(
      "127.0.0.1:8787 is Relay's own host; Relay does not call itself.",
    );
  });
});
