// The host side of Owlbear Rodeo's extension message bus, for two players in one room.
const params = new URLSearchParams(location.search);
const extension = params.get("extension"); // the popover page's URL
const room = "room-standin";
const players = {
  gm: { name: "Gamemaster", role: "GM", id: "u-gm" },
  player: { name: "Roth", role: "PLAYER", id: "u-roth" },
};
const metadata = {};
const subscriptions = { gm: new Set(), player: new Set() };
window.notifications = [];
window.broadcasts = [];

const frames = {};
for (const who of Object.keys(players)) {
  const frame = document.getElementById(who);
  frames[who] = frame;
  const ref = btoa(`${location.origin} ${room}`);
  frame.src = `${extension}?obrref=${encodeURIComponent(ref)}`;
  frame.addEventListener("load", () => post(who, "OBR_READY", { ref: `ref-${who}`, userId: players[who].id }));
}

function post(who, id, data) {
  frames[who].contentWindow.postMessage({ id, data }, "*");
}

function answer(who, message, data) {
  post(who, `${message.id}_RESPONSE${message.nonce ?? ""}`, data);
}

window.addEventListener("message", (event) => {
  const who = Object.keys(frames).find((w) => frames[w].contentWindow === event.source);
  const message = event.data;
  if (!who || typeof message?.id !== "string") return;
  const me = players[who];
  switch (message.id) {
    case "OBR_PLAYER_GET_NAME": return answer(who, message, { name: me.name });
    case "OBR_PLAYER_GET_ROLE": return answer(who, message, { role: me.role });
    case "OBR_PLAYER_GET_ID": return answer(who, message, { id: me.id });
    case "OBR_ROOM_GET_METADATA": return answer(who, message, { metadata: { ...metadata } });
    case "OBR_ROOM_SET_METADATA":
      Object.assign(metadata, message.data.update);
      answer(who, message, {});
      for (const other of Object.keys(frames)) post(other, "OBR_ROOM_METADATA_EVENT_CHANGE", { metadata: { ...metadata } });
      return;
    case "OBR_BROADCAST_SUBSCRIBE": subscriptions[who].add(message.data.channel); return;
    case "OBR_BROADCAST_SEND_MESSAGE": {
      const { channel, data, options } = message.data;
      window.broadcasts.push({ from: who, channel, data });
      const to = options?.destination ?? "REMOTE";
      for (const other of Object.keys(frames)) {
        const include = to === "ALL" || (to === "REMOTE" ? other !== who : other === who);
        if (include && subscriptions[other].has(channel)) {
          post(other, `OBR_BROADCAST_MESSAGE_${channel}`, { data, connectionId: `c-${who}` });
        }
      }
      return answer(who, message, {});
    }
    case "OBR_NOTIFICATION_SHOW":
      window.notifications.push({ to: who, message: message.data.message, variant: message.data.variant });
      return answer(who, message, { id: `n${window.notifications.length}` });
    default:
      if (message.nonce) post(who, `${message.id}_ERROR${message.nonce}`, { message: `the stand-in does not answer ${message.id}` });
  }
});

/** Deliver a broadcast as if a player had sent it (the test's forged checkpoint). */
window.inject = (to, channel, data) => post(to, `OBR_BROADCAST_MESSAGE_${channel}`, { data, connectionId: "c-mallory" });
window.frame = (who) => frames[who].contentWindow;
