// The order in which interleaved rooms run, round by round.
//
// Rooms that share a workerd process are not independent: a room's turn runs right after
// another room's turn, in the same isolate, and pays for what that turn left behind (its
// garbage, the caches it filled). A rotating order (raw, dokit, ref; then dokit, ref, raw; ...)
// puts raw's turn right after the reference's, the heaviest room, in two rounds of three, and
// dokit's right after raw's, the lightest: one room gets the heavier predecessor more often,
// and a measure reads the rooms' neighbours as well as the rooms.
// The orders below give every room every position, and every other room as its predecessor,
// equally often (bench/README.md, "How it runs").

/**
 * The orders of `n` rooms for successive rounds: a Williams design (n orders for an even n,
 * 2n for an odd n). Over one cycle of them each room runs equally often in each position and
 * right after each other room within a round; the orders are listed so that no room runs twice
 * in a row across rounds, where that is possible (not with two rooms). For three rooms: each of
 * the six orders once, and each room follows each other room exactly three times over the cycle,
 * counting the cycle's end and start.
 * Rounds take them in turn; a measure with a multiple of the cycle's length in rounds is balanced.
 * @param n - how many rooms
 * @returns the orders, each a list of room indices
 */
export function balancedOrders(n: number): number[][] {
  if (n < 2) return [n === 1 ? [0] : []];
  // First order 0, 1, n-1, 2, n-2, ...; the others add 1, 2, ... (mod n) to it.
  const first = [0];
  for (let low = 1, high = n - 1; first.length < n; ) first.push(first.length % 2 === 1 ? low++ : high--);
  const shifted = Array.from({ length: n }, (_, shift) => first.map((room) => (room + shift) % n));
  const all = n % 2 === 0 ? shifted : [...shifted, ...shifted.map((order) => [...order].reverse())];
  // Chain them so that a round never starts with the room that ended the round before.
  const chained = [all.shift() as number[]];
  while (all.length > 0) {
    const last = (chained.at(-1) as number[]).at(-1);
    const next = all.findIndex((order) => order[0] !== last);
    chained.push(all.splice(next < 0 ? 0 : next, 1)[0] as number[]);
  }
  return chained;
}

/**
 * @param rooms - the rooms, in their listed order
 * @returns a function from a round's number to that round's order of `rooms` (negative rounds, warm-ups, take the first order)
 */
export function roundOrder<T>(rooms: readonly T[]): (round: number) => readonly T[] {
  const orders = balancedOrders(rooms.length).map((order) => order.map((index) => rooms[index] as T));
  return (round) => orders[Math.max(round, 0) % orders.length] as T[];
}
