// Preloaded into the Redocly lint subprocess (tests/http/openapi.test.ts): any attempt to reach
// the network (fetch, a TCP or UDP socket, a DNS lookup) is refused and reported on stderr, so
// the test sees it. The lint must work offline: CI may have no network, and a test must not phone home.
import dgram from "node:dgram";
import dns from "node:dns";
import net from "node:net";

const refuse = (what: string) => (..._args: unknown[]): never => {
  process.stderr.write(`NETWORK ATTEMPT: ${what}\n`);
  throw new Error(`network refused in this test: ${what}`);
};

globalThis.fetch = Object.assign(refuse("fetch"), { preconnect: refuse("fetch.preconnect") }) as unknown as typeof fetch;
Bun.connect = refuse("Bun.connect") as unknown as typeof Bun.connect;
Bun.udpSocket = refuse("Bun.udpSocket") as unknown as typeof Bun.udpSocket;
net.Socket.prototype.connect = refuse("net.Socket.connect") as unknown as typeof net.Socket.prototype.connect;
net.connect = net.createConnection = refuse("net.connect") as unknown as typeof net.connect;
dgram.createSocket = refuse("dgram.createSocket") as unknown as typeof dgram.createSocket;
for (const name of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny"] as const) {
  (dns as unknown as Record<string, unknown>)[name] = refuse(`dns.${name}`);
  (dns.promises as unknown as Record<string, unknown>)[name] = refuse(`dns.promises.${name}`);
}
