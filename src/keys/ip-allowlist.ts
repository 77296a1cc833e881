// IP allowlists of addresses and CIDR ranges, IPv4 and IPv6 (IPv4-mapped IPv6 is
// compared as IPv4).
import ipaddr from 'ipaddr.js';

export type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export function parseAllowEntry(entry: string): Range {
  const text = entry.trim();
  const r = text.includes('/') ? ipaddr.parseCIDR(text) : ((a) => [a, a.kind() === 'ipv4' ? 32 : 128] as Range)(ipaddr.parse(text));
  return [normalize(r[0]), r[0].kind() === 'ipv6' && normalize(r[0]).kind() === 'ipv4' ? Math.max(0, r[1] - 96) : r[1]];
}

export function isValidAllowEntry(entry: string): boolean {
  try {
    parseAllowEntry(entry);
    return true;
  } catch {
    return false;
  }
}

function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

export function ipAllowed(ip: string, ranges: readonly Range[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = normalize(ipaddr.parse(ip));
  } catch {
    return false;
  }
  return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match([net, bits] as never));
}
