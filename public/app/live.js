import { apiKey } from "./api.js";

// A session's live events over its WebSocket. The key travels as a subprotocol (a browser
// cannot set headers on a WebSocket); reconnects resume after the last event seen.

export function subscribe(sessionId, onEvent, onState) {
  let socket;
  let last;
  let closed = false;
  let delay = 500;
  let timer;

  const open = () => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const after = last ? `?after=${encodeURIComponent(last)}` : "";
    socket = new WebSocket(`${scheme}://${location.host}/v1/sessions/${encodeURIComponent(sessionId)}/ws${after}`, [
      "relay.v1",
      `bearer.${apiKey()}`,
    ]);
    socket.addEventListener("message", (message) => {
      const frame = JSON.parse(message.data);
      if (frame.type === "subscribed") {
        delay = 500;
        onState("live");
        return;
      }
      if (frame.id) last = frame.id;
      onEvent(frame);
    });
    socket.addEventListener("close", () => {
      if (closed) return;
      onState("reconnecting");
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 10_000);
    });
  };
  open();
  return () => {
    closed = true;
    clearTimeout(timer);
    socket?.close(1000, "left the page");
  };
}
