// The vox page: speak text (POST /v1/audio/speech as SSE of 24 kHz PCM, played with Web Audio as it
// arrives), a live-typing box over WS /v1/duplex, voice creation from a file or the microphone.
// Plain JS, no build step. What the page received and what it played are kept in window.voxPage
// (the received PCM, each chunk's place on the audio clock, and the samples the audio graph really
// rendered, captured by a pass-through AudioWorklet in front of the speakers), so that a test can
// check that the page played exactly the audio the server sent.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const RATE = 24000;                 // the server's PCM (OpenAI's pcm, and the WebSocket's frames)
  const LEAD = Math.round(0.08 * RATE); // frames between "now" and a chunk that arrives late

  const page = window.voxPage = { ready: false, speech: null, live: null, recording: null, voices: [] };

  // ------------------------------------------------------------------ the API
  const keyInput = $("api-key");
  keyInput.value = localStorage.getItem("vox.apiKey") || "";
  keyInput.addEventListener("change", () => { localStorage.setItem("vox.apiKey", keyInput.value.trim()); refresh(); });
  const key = () => keyInput.value.trim();

  async function api(path, opts = {}) {
    const headers = Object.assign({}, opts.headers || {});
    if (key()) headers.Authorization = "Bearer " + key();
    const r = await fetch(path, Object.assign({}, opts, { headers }));
    if (!r.ok) {
      let msg = `${r.status} ${r.statusText}`;
      try { msg = (await r.json()).error.message; } catch (_) { /* not JSON */ }
      const e = new Error(msg); e.status = r.status; throw e;
    }
    return r;
  }
  const getJSON = async (path) => (await api(path)).json();

  function show(el, text, error) { el.textContent = text; el.classList.toggle("error", !!error); }

  // ------------------------------------------------------------------ playback
  // Every chunk goes through one bus into a tap (a pass-through AudioWorklet) and then the speakers;
  // the tap posts each rendered block with its frame on the audio clock while capturing is on.
  const TAP = `class VoxTap extends AudioWorkletProcessor {
    constructor() { super(); this.on = false; this.port.onmessage = (e) => { this.on = e.data; }; }
    process(inputs, outputs) {
      const i = inputs[0], o = outputs[0];
      for (let c = 0; c < o.length; c++) { if (i && i[c]) o[c].set(i[c]); }
      if (this.on && i && i[0]) this.port.postMessage({ frame: currentFrame, data: i[0].slice(0) });
      return true;
    }
  }
  registerProcessor("vox-tap", VoxTap);`;
  let tapURL = null;
  async function addTap(ctx) {
    tapURL = tapURL || URL.createObjectURL(new Blob([TAP], { type: "application/javascript" }));
    await ctx.audioWorklet.addModule(tapURL);
    return new AudioWorkletNode(ctx, "vox-tap", { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
  }

  class Player {
    async init() {
      if (this.ctx) { if (this.ctx.state === "suspended") await this.ctx.resume(); return; }
      const ctx = new AudioContext({ sampleRate: RATE, latencyHint: "interactive" });
      this.tap = await addTap(ctx);
      this.bus = ctx.createGain();
      this.bus.connect(this.tap);
      this.tap.connect(ctx.destination);
      this.blocks = [];
      this.tap.port.onmessage = (e) => { if (this.blocks.length < 60 * RATE / 128) this.blocks.push(e.data); };
      this.tap.port.postMessage(true);
      this.ctx = ctx;
      this.sources = [];
      this.nextFrame = 0;
      if (ctx.state === "suspended") await ctx.resume();
    }
    begin() {                        // a new utterance: forget the last one
      this.stop();
      this.blocks = [];
      this.nextFrame = 0;
    }
    play(pcm, entry) {               // pcm: Int16Array; entry gets startFrame, samples, ended
      const ctx = this.ctx;
      const f = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) f[i] = pcm[i] / 32768;
      const buf = ctx.createBuffer(1, f.length, RATE);
      buf.copyToChannel(f, 0);
      const src = ctx.createBufferSource();
      src.buffer = buf;
      src.connect(this.bus);
      // chunks follow each other without a gap; one that comes late starts a little after now
      const now = Math.ceil(ctx.currentTime * RATE) + LEAD;
      const start = Math.max(this.nextFrame, now);
      src.start(start / RATE);
      this.nextFrame = start + f.length;
      entry.startFrame = start; entry.samples = f.length; entry.ended = false;
      src.onended = () => { entry.ended = true; this.sources = this.sources.filter((s) => s !== src); };
      this.sources.push(src);
      return entry;
    }
    stop() { for (const s of this.sources || []) { try { s.stop(); } catch (_) { /* not started */ } } this.sources = []; }
    // the rendered samples of frames [from, from + n) as 16-bit values (what reached the speakers)
    rendered(from, n) {
      const out = new Int16Array(n);
      for (const b of this.blocks) {
        const lo = Math.max(from, b.frame), hi = Math.min(from + n, b.frame + b.data.length);
        for (let f = lo; f < hi; f++) {
          const v = Math.round(b.data[f - b.frame] * 32768);
          out[f - from] = Math.max(-32768, Math.min(32767, v));
        }
      }
      return out;
    }
    get seconds() { return this.ctx ? this.ctx.currentTime : 0; }
  }
  const player = new Player();

  function b64ToInt16(b64) {
    const bin = atob(b64);
    const n = bin.length >> 1;
    const out = new Int16Array(n);
    for (let i = 0; i < n; i++) {
      const v = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);   // little-endian
      out[i] = v >= 32768 ? v - 65536 : v;
    }
    return out;
  }
  function bytesToInt16(buf) {
    const dv = new DataView(buf), out = new Int16Array(buf.byteLength >> 1);
    for (let i = 0; i < out.length; i++) out[i] = dv.getInt16(2 * i, true);
    return out;
  }
  function int16ToB64(pcm) {
    let s = "";
    const u8 = new Uint8Array(pcm.length * 2);
    const dv = new DataView(u8.buffer);
    for (let i = 0; i < pcm.length; i++) dv.setInt16(2 * i, pcm[i], true);
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    return btoa(s);
  }
  function concat(parts) {
    const n = parts.reduce((a, p) => a + p.length, 0), out = new Int16Array(n);
    let o = 0;
    for (const p of parts) { out.set(p, o); o += p.length; }
    return out;
  }
  function wavBlob(pcm, rate) {
    const b = new ArrayBuffer(44 + pcm.length * 2), dv = new DataView(b);
    const str = (o, s) => { for (let i = 0; i < s.length; i++) dv.setUint8(o + i, s.charCodeAt(i)); };
    str(0, "RIFF"); dv.setUint32(4, 36 + pcm.length * 2, true); str(8, "WAVE"); str(12, "fmt ");
    dv.setUint32(16, 16, true); dv.setUint16(20, 1, true); dv.setUint16(22, 1, true); dv.setUint32(24, rate, true);
    dv.setUint32(28, rate * 2, true); dv.setUint16(32, 2, true); dv.setUint16(34, 16, true); str(36, "data");
    dv.setUint32(40, pcm.length * 2, true);
    for (let i = 0; i < pcm.length; i++) dv.setInt16(44 + 2 * i, pcm[i], true);
    return new Blob([b], { type: "audio/wav" });
  }
  // an utterance's record, as window.voxPage exposes it
  function utterance(kind) {
    return {
      kind, status: "starting", error: null, chunks: [], parts: [], words: [], lit: [], events: [], usage: null,
      firstAudioMs: null, received: false, played: false, t0: performance.now(),
      pcmBase64() { return int16ToB64(concat(this.parts)); },
      renderedBase64(i) { const c = this.chunks[i]; return int16ToB64(player.rendered(c.startFrame, c.samples)); },
    };
  }
  function whenPlayed(u) {
    const check = () => {
      if (u.chunks.length && u.chunks.every((c) => c.ended)) { u.played = true; u.status = "played"; return; }
      setTimeout(check, 50);
    };
    check();
  }

  // ------------------------------------------------------------------ models and voices
  const modelSel = $("model"), voiceSel = $("voice");
  async function refresh() {
    try {
      const h = await getJSON("/health");
      show($("health"), `${h.models.length} model${h.models.length === 1 ? "" : "s"} · ${h.active_sessions}/${h.max_sessions} sessions`);
      const models = (await getJSON("/v1/models")).data;
      const keep = modelSel.value;
      modelSel.innerHTML = "";
      for (const m of models) modelSel.add(new Option(`${m.id} (${m.family})`, m.id));
      if (keep && models.some((m) => m.id === keep)) modelSel.value = keep;
      await loadVoices();
      page.ready = true;
    } catch (e) {
      show($("health"), e.message, true);
    }
  }
  async function loadVoices() {
    const model = modelSel.value;
    const data = (await getJSON(`/v1/voices?model=${encodeURIComponent(model)}`)).data;
    page.voices = data;
    const keep = voiceSel.value;
    voiceSel.innerHTML = "";
    const group = (label, items) => {
      if (!items.length) return;
      const g = document.createElement("optgroup"); g.label = label;
      for (const [value, text] of items) g.appendChild(new Option(text, value));
      voiceSel.appendChild(g);
    };
    const def = data.find((v) => v.kind === "default");
    if (def) voiceSel.add(new Option(`default (${def.target})`, "default"));
    group("speakers", data.filter((v) => v.kind === "speaker").map((v) => [v.id, v.id]));
    group("stored", data.filter((v) => v.kind === "stored" && v.models.includes(model)).map((v) => [v.id, v.id]));
    group("aliases", data.filter((v) => v.kind === "alias").map((v) => [v.id, `${v.id} → ${v.target}`]));
    if (keep && [...voiceSel.options].some((o) => o.value === keep)) voiceSel.value = keep;
    const stored = $("stored");
    stored.innerHTML = "";
    for (const v of data.filter((x) => x.kind === "stored")) {
      const li = document.createElement("li");
      li.textContent = `${v.id} — ${v.family} ${v.mode}, ${v.language}` + (v.models.length ? ` (for ${v.models.join(", ")})` : "");
      const del = document.createElement("button");
      del.textContent = "delete";
      del.onclick = async () => {
        try { await api(`/v1/voices/${encodeURIComponent(v.id)}`, { method: "DELETE" }); await loadVoices(); }
        catch (e) { show($("create-status"), e.message, true); }
      };
      li.appendChild(del);
      stored.appendChild(li);
    }
  }
  modelSel.addEventListener("change", () => loadVoices().catch((e) => show($("health"), e.message, true)));

  function voiceChoice() { return $("voice-text").value.trim() || voiceSel.value || "default"; }
  function commonSettings() {
    const o = { model: modelSel.value, voice: voiceChoice() };
    const speed = parseFloat($("speed").value);
    if (isFinite(speed) && speed !== 1) o.speed = speed;
    const seed = $("seed").value.trim();
    if (seed !== "") o.seed = parseInt(seed, 10);
    const instr = $("instructions").value.trim();
    if (instr) o.instructions = instr;
    return o;
  }

  // ------------------------------------------------------------------ words, highlighted as spoken
  // words: [{word, start, end}] in seconds from the utterance's first sample, which plays at the
  // first chunk's frame on the audio clock
  function addWords(u, el, words) {
    for (const w of words) {
      const span = document.createElement("span");
      span.textContent = w.word;
      span.dataset.i = u.words.length;
      span.dataset.start = w.start; span.dataset.end = w.end;
      el.appendChild(span);
      el.appendChild(document.createTextNode(" "));
      u.words.push(w);
    }
    if (!u.highlighting) { u.highlighting = true; requestAnimationFrame(() => highlight(u, el)); }
  }
  function highlight(u, el) {
    if (u.chunks.length) {
      const t = player.seconds - u.chunks[0].startFrame / RATE;
      for (const span of el.querySelectorAll("span")) {
        const on = t >= +span.dataset.start && t < +span.dataset.end;
        span.classList.toggle("now", on);
        if (on) u.lit[+span.dataset.i] = true;
      }
    }
    if (!u.played && !u.error && (u === page.speech || u === page.live)) requestAnimationFrame(() => highlight(u, el));
    else for (const span of el.querySelectorAll("span.now")) span.classList.remove("now");
  }

  // ------------------------------------------------------------------ speak (SSE of PCM)
  const wordsEl = $("words");
  let speakAbort = null;

  async function speak() {
    const status = $("speak-status");
    const text = $("text").value;
    const u = page.speech = utterance("speech");
    $("download").hidden = true;
    wordsEl.textContent = "";
    try {
      await player.init();
      player.begin();
      const body = Object.assign(commonSettings(), { input: text, response_format: "pcm", stream_format: "sse" });
      speakAbort = new AbortController();
      $("speak").disabled = true; $("stop").disabled = false;
      show(status, "waiting for the first audio…");
      u.status = "streaming";
      const r = await api("/v1/audio/speech", { method: "POST", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json" }, signal: speakAbort.signal });
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      const handle = (block) => {
        for (const line of block.split("\n")) {
          if (!line.startsWith("data:")) continue;
          const ev = JSON.parse(line.slice(5));
          u.events.push(ev.type);
          if (ev.type === "speech.audio.delta") {
            const pcm = b64ToInt16(ev.audio);
            if (ev.words) addWords(u, wordsEl, ev.words);
            if (!pcm.length) continue;
            if (u.firstAudioMs === null) u.firstAudioMs = Math.round(performance.now() - u.t0);
            u.parts.push(pcm);
            u.chunks.push(player.play(pcm, {}));
            show(status, `playing · first audio after ${u.firstAudioMs} ms · ${(u.parts.reduce((a, p) => a + p.length, 0) / RATE).toFixed(1)} s received`);
          } else if (ev.type === "speech.audio.done") {
            u.usage = ev.usage;
          } else if (ev.type === "error") {
            throw new Error(ev.error.message);
          }
        }
      };
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let k;
        while ((k = buf.indexOf("\n\n")) >= 0) { handle(buf.slice(0, k)); buf = buf.slice(k + 2); }
      }
      if (!u.words.length) wordsEl.textContent = text;
      u.received = true;
      u.status = "received";
      const all = concat(u.parts);
      const a = $("download");
      a.href = URL.createObjectURL(wavBlob(all, RATE)); a.download = "vox.wav"; a.hidden = false;
      whenPlayed(u);
    } catch (e) {
      u.status = "error"; u.error = e.message;
      show(status, e.name === "AbortError" ? "stopped" : e.message, e.name !== "AbortError");
    } finally {
      $("speak").disabled = false; $("stop").disabled = true;
      speakAbort = null;
    }
  }
  $("speak").addEventListener("click", speak);
  $("stop").addEventListener("click", () => { if (speakAbort) speakAbort.abort(); player.stop(); });

  // ------------------------------------------------------------------ live typing (WS /v1/duplex)
  let ws = null;
  const liveEl = $("live"), liveStatus = $("live-status");
  function liveButtons(on) {
    for (const id of ["live-flush", "live-end", "live-cancel"]) $(id).disabled = !on;
    liveEl.disabled = !on;
    $("live-start").disabled = on;
  }
  async function liveStart() {
    await player.init();
    player.begin();
    const u = page.live = utterance("live");
    $("live-words").textContent = "";
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/duplex`;
    ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    show(liveStatus, "connecting…");
    ws.onopen = () => {
      const start = Object.assign({ type: "start", commit: $("commit").value }, commonSettings());
      if (key()) start.api_key = key();
      ws.send(JSON.stringify(start));
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== "string") {
        const pcm = bytesToInt16(m.data);
        if (u.firstAudioMs === null) u.firstAudioMs = Math.round(performance.now() - u.t0);
        u.parts.push(pcm);
        u.chunks.push(player.play(pcm, {}));
        show(liveStatus, `playing · ${(u.parts.reduce((a, p) => a + p.length, 0) / RATE).toFixed(1)} s`);
        return;
      }
      const ev = JSON.parse(m.data);
      u.events.push(ev.type);
      if (ev.type === "started") {
        u.status = "started"; liveButtons(true); liveEl.focus();
        show(liveStatus, `connected (${ev.model}, ${ev.voice}, commit ${ev.commit})`);
        if (liveEl.value) send({ type: "set_text", text: liveEl.value });
      } else if (ev.type === "words") {
        addWords(u, $("live-words"), ev.words);
      } else if (ev.type === "done") {
        u.received = true; u.status = ev.cancelled ? "cancelled" : "received";
        show(liveStatus, ev.cancelled ? "cancelled" : `done · ${ev.seconds} s`);
        if (u.chunks.length) whenPlayed(u); else u.played = true;
      } else if (ev.type === "error") {
        u.error = ev.message;
        show(liveStatus, ev.message, true);
      }
    };
    ws.onclose = (e) => {
      liveButtons(false);
      if (u.status === "starting") { u.status = "closed"; }
      u.closeCode = e.code;
      ws = null;
    };
  }
  function send(obj) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj)); }
  $("live-start").addEventListener("click", () => liveStart().catch((e) => show(liveStatus, e.message, true)));
  liveEl.addEventListener("input", () => send({ type: "set_text", text: liveEl.value }));
  $("live-flush").addEventListener("click", () => send({ type: "flush" }));
  $("live-end").addEventListener("click", () => send({ type: "end" }));
  $("live-cancel").addEventListener("click", () => { send({ type: "cancel" }); player.stop(); });

  // ------------------------------------------------------------------ voices: a file or the microphone
  let rec = null;
  async function recStart() {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false,
      noiseSuppression: false, autoGainControl: false } });
    const ctx = new AudioContext();
    const tap = await addTap(ctx);
    const src = ctx.createMediaStreamSource(stream);
    const sink = ctx.createGain(); sink.gain.value = 0;       // keep the graph pulled, silently
    src.connect(tap); tap.connect(sink); sink.connect(ctx.destination);
    const blocks = [];
    tap.port.onmessage = (e) => { if (blocks.length < 120 * ctx.sampleRate / 128) blocks.push(e.data.data); };
    tap.port.postMessage(true);
    rec = { stream, ctx, blocks, t0: performance.now() };
    $("rec-start").disabled = true; $("rec-stop").disabled = false;
    show($("rec-status"), "recording…");
  }
  async function recStop() {
    if (!rec) return;
    const { stream, ctx, blocks } = rec;
    rec = null;
    stream.getTracks().forEach((t) => t.stop());
    const n = blocks.reduce((a, b) => a + b.length, 0), pcm = new Int16Array(n);
    let o = 0;
    for (const b of blocks) for (let i = 0; i < b.length; i++) pcm[o++] = Math.max(-32768, Math.min(32767, Math.round(b[i] * 32767)));
    const rate = ctx.sampleRate;
    await ctx.close();
    page.recording = { sampleRate: rate, samples: n, pcmBase64: () => int16ToB64(pcm), blob: wavBlob(pcm, rate) };
    $("rec-start").disabled = false; $("rec-stop").disabled = true;
    show($("rec-status"), `recorded ${(n / rate).toFixed(1)} s`);
  }
  $("rec-start").addEventListener("click", () => recStart().catch((e) => show($("rec-status"), e.message, true)));
  $("rec-stop").addEventListener("click", () => recStop().catch((e) => show($("rec-status"), e.message, true)));
  $("new-file").addEventListener("change", () => { page.recording = null; show($("rec-status"), ""); });

  async function createVoice() {
    const status = $("create-status");
    const fd = new FormData();
    const file = $("new-file").files[0];
    if (page.recording) fd.append("file", page.recording.blob, "recording.wav");
    else if (file) fd.append("file", file, file.name);
    else { show(status, "choose a file or record first", true); return; }
    fd.append("name", $("new-name").value.trim());
    fd.append("text", $("new-text").value.trim());
    const m = modelSel.value;
    const model = (await getJSON("/v1/models")).data.find((x) => x.id === m);
    if (model && model.capabilities.clone) fd.append("model", m);
    const seed = $("seed").value.trim();
    if (seed !== "") fd.append("seed", seed);
    show(status, "creating…");
    try {
      const v = await (await api("/v1/voices", { method: "POST", body: fd })).json();
      page.created = v;
      show(status, `created ${v.id} (${v.family} ${v.mode}, ${v.seconds} s, for ${v.model})`);
      await loadVoices();
    } catch (e) {
      page.created = { error: e.message, status: e.status };
      show(status, e.message, true);
    }
  }
  $("create").addEventListener("click", createVoice);

  refresh();
})();
