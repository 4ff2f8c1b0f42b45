// The globals of Foundry VTT v12 and v13 (?generation=13) that the fairroll module uses, as a stand-in.
const params = new URLSearchParams(location.search);
const hooks = new Map();
globalThis.Hooks = {
  on(name, fn) { (hooks.get(name) ?? hooks.set(name, []).get(name)).push({ fn, once: false }); },
  once(name, fn) { (hooks.get(name) ?? hooks.set(name, []).get(name)).push({ fn, once: true }); },
  callAll(name, ...args) {
    const listeners = hooks.get(name) ?? [];
    hooks.set(name, listeners.filter((l) => !l.once));
    for (const l of listeners) l.fn(...args);
    return true;
  },
};

const settings = new Map();
const channel = new BroadcastChannel("foundry-socket"); // other pages: the other clients
const listeners = new Map();
channel.onmessage = (event) => { for (const fn of listeners.get(event.data.name) ?? []) fn(event.data.data); };
// The world's users: the Gamemaster is its GM; each user by id, as Foundry's game.users.
const USERS = ["Gamemaster", "Roth", "Sue"].map((name) => ({ id: `u-${name.toLowerCase()}`, name, isGM: name === "Gamemaster" }));
const me = params.get("user") ?? "Gamemaster";
globalThis.game = {
  user: USERS.find((u) => u.name === me) ?? { id: `u-${me.toLowerCase()}`, name: me, isGM: false },
  users: USERS,
  world: { id: "standin-world" },
  release: { generation: Number(params.get("generation") ?? 12) },
  // The installed module's manifest (?manifest=), as Foundry keeps it: its flags too.
  modules: new Map(),
  settings: {
    register(ns, key, config) { settings.set(`${ns}.${key}`, config.default); },
    get(ns, key) { return settings.get(`${ns}.${key}`); },
    set(ns, key, value) { settings.set(`${ns}.${key}`, value); },
  },
  socket: {
    emit(name, data) { channel.postMessage({ name, data }); },
    on(name, fn) { (listeners.get(name) ?? listeners.set(name, []).get(name)).push(fn); },
  },
};
window.deliver = (name, data) => { for (const fn of listeners.get(name) ?? []) fn(data); };

globalThis.CONFIG = { Dice: { fulfillment: { dice: {}, methods: {}, defaultMethod: "" } } };
window.alarms = [];
window.infos = [];
globalThis.ui = {
  notifications: {
    error: (message) => window.alarms.push(message),
    warn: (message) => window.alarms.push(message),
    info: (message) => window.infos.push(message),
  },
};
globalThis.foundry = { applications: { dice: { RollResolver: class RollResolver {} } }, dice: { terms: {} } };

// Chat messages reach every client, as Foundry's server relays them, but a whispered one
// only its recipients (and its author); only the author's is rendered with isAuthor, and
// a roll travels as its JSON (formula, options, total), with the message's flags.
// preCreateChatMessage is called with the message before it is created, as Foundry does;
// a listener changes it with updateSource.
let messages = 0;
const chat = new BroadcastChannel("foundry-chat");
function show(message) {
  const item = document.createElement("li");
  item.className = "message";
  item.innerHTML = message.content;
  document.getElementById("chat").append(item);
  // Foundry 13 hands the hook the element; 12 a jQuery of it.
  if (game.release.generation >= 13) Hooks.callAll("renderChatMessageHTML", message, item, {});
  else Hooks.callAll("renderChatMessage", message, [item], {});
}
chat.onmessage = (event) => {
  const { whisper = [] } = event.data;
  if (whisper.length && !whisper.includes(game.user.id)) return;  // not sent to this client
  show({ ...event.data, isAuthor: false });
};
window.receiveChat = (message) => show({ ...message, isAuthor: false });
window.created = [];
globalThis.ChatMessage = {
  async create({ content = "", rolls = [], whisper = [], blind = false, flags = {} } = {}) {
    const message = {
      id: `m${++messages}`, content, rolls, isAuthor: true, whisper, blind, flags,
      updateSource(changes) { Object.assign(this, JSON.parse(JSON.stringify(changes))); },
    };
    Hooks.callAll("preCreateChatMessage", message, { content, rolls }, {}, game.user.id);
    show(message);
    const relayed = rolls.map((r) => JSON.parse(JSON.stringify({ formula: r.formula, options: r.options, total: r.total })));
    const sent = { id: message.id, content, rolls: relayed, whisper: message.whisper, blind: message.blind, flags: message.flags };
    window.created.push(JSON.parse(JSON.stringify(sent)));
    chat.postMessage(sent);
    return message;
  },
};

// A die term as Foundry v12 evaluates it: every die first, then each modifier in the order
// written over the results (r/rr reroll =N or <N, x explodes =N, kh/kl keep), each face
// from the configured fulfillment method (Math.random where it gives none).
class Term {
  constructor(number, faces, modifiers) { Object.assign(this, { number, faces, modifiers, results: [] }); }
  async die() {
    const method = CONFIG.Dice.fulfillment.methods[CONFIG.Dice.fulfillment.defaultMethod];
    const face = method?.handler ? await method.handler(this, {}) : undefined;
    const result = { result: face ?? 1 + Math.floor(Math.random() * this.faces), active: true };
    this.results.push(result);
    return result;
  }
  async evaluate() {
    for (let i = 0; i < this.number; i++) await this.die();
    for (const m of this.modifiers.match(/(rr|r|x|kh|kl)([<=]?)(\d*)/g) ?? []) {
      const [, kind, op, n] = m.match(/(rr|r|x|kh|kl)([<=]?)(\d*)/);
      const target = n ? Number(n) : kind.startsWith("r") ? 1 : this.faces;
      const matches = (v) => (op === "<" ? v < target : v === target);
      if (kind === "kh" || kind === "kl") {
        const keep = n ? Number(n) : 1;
        const active = this.results.filter((r) => r.active).sort((a, b) => (kind === "kh" ? a.result - b.result : b.result - a.result));
        for (const r of active.slice(0, active.length - keep)) r.active = false;
        continue;
      }
      let checked = 0;
      const initial = this.results.length;
      while (checked < this.results.length) {
        const r = this.results[checked++];
        if (r.active && matches(r.result)) {
          if (kind.startsWith("r")) r.active = false;
          await this.die();
        }
        if (kind === "r" && checked === initial) break;
      }
    }
    return this.results.filter((r) => r.active).reduce((t, r) => t + r.result, 0);
  }
}

globalThis.Roll = class Roll {
  constructor(formula, data = {}, options = {}) { Object.assign(this, { formula, data, options, total: undefined }); }
  async evaluate() {
    let total = 0;
    for (const [, sign, part] of this.formula.replace(/\s+/g, "").matchAll(/([+-]?)([^+-]+)/g)) {
      const dice = part.match(/^(\d*)d(\d+)(.*)$/);
      const value = dice ? await new Term(Number(dice[1] || 1), Number(dice[2]), dice[3]).evaluate() : Number(part);
      total += sign === "-" ? -value : value;
    }
    this.total = total;
    return this;
  }
  async toMessage() { return ChatMessage.create({ rolls: [this] }); }
};
