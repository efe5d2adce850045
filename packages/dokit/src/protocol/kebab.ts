/**
 * The binding name as it appears in URLs: `RoomAgent` → `room-agent`,
 * `MY_AGENT` → `my-agent`, `AIAssistant` → `a-i-assistant`.
 * The client and the router must use this same function.
 * @param name - a Durable Object binding or class name
 * @returns the kebab-case form used in `/agents/{kebab}/{name}`
 */
export function kebab(name: string): string {
  if (name === name.toUpperCase() && name !== name.toLowerCase()) {
    return name.toLowerCase().replaceAll("_", "-");
  }
  let out = name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  out = out.replaceAll("_", "-");
  return out.startsWith("-") ? out.slice(1) : out;
}
