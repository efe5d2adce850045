// Reads an upgrade that dokit refused: a 101 whose socket is already closed
// with a code in 4000–4999 and a reason (lifecycle/refuse.ts).

/** @returns the close code and reason of the refused socket; throws when the answer is not a 101 with a socket */
export async function refusedClose(response: Response): Promise<{ code: number; reason: string }> {
  const socket = response.webSocket;
  if (response.status !== 101 || !socket) throw new Error(`expected a 101 with a closed socket, got ${response.status}: ${await response.text()}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  socket.accept();
  return closed;
}
