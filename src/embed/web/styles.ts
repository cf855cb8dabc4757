// The component's own look, inside its shadow root: the host page's styles do not reach in,
// and these do not leak out. Sized by the host element (`likeness-avatar { width: 480px }`),
// at most 360 px wide by default so it fits a phone.
export const AVATAR_CSS = `
:host {
  display: inline-block;
  box-sizing: border-box;
  width: 100%;
  max-width: 360px;
  font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1b1d21;
}
:host([form-factor="desktop"]) { max-width: 640px; }
:host([frame]) { display: block; max-width: none; height: 100%; }
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.root { display: flex; flex-direction: column; gap: 8px; height: 100%; }
.stage {
  position: relative;
  width: 100%;
  aspect-ratio: 9 / 16;
  max-height: 80vh;
  background: #111;
  border-radius: 12px;
  overflow: hidden;
}
:host([frame]) .stage { flex: 1; aspect-ratio: auto; max-height: none; min-height: 0; border-radius: 0; }
:host([form-factor="desktop"]) .stage { aspect-ratio: 16 / 9; }
.stage[hidden], [hidden] { display: none !important; }
video { width: 100%; height: 100%; object-fit: contain; display: block; }
.captions {
  position: absolute;
  left: 8px;
  right: 8px;
  bottom: 8px;
  margin: 0;
  padding: 0;
  list-style: none;
  display: flex;
  flex-direction: column;
  gap: 4px;
  pointer-events: none;
}
.captions li {
  align-self: flex-start;
  max-width: 100%;
  padding: 4px 8px;
  border-radius: 8px;
  background: rgba(0, 0, 0, 0.72);
  color: #fff;
  overflow-wrap: anywhere;
}
.captions li.visitor { align-self: flex-end; background: rgba(32, 64, 160, 0.8); }
.who { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.recording {
  position: absolute;
  top: 8px;
  right: 8px;
  margin: 0;
  display: flex;
  align-items: center;
  gap: 6px;
  padding: 2px 10px;
  border-radius: 12px;
  background: rgba(0, 0, 0, 0.72);
  color: #fff;
  font-size: 13px;
  font-weight: 600;
  pointer-events: none;
}
.recording .dot { width: 10px; height: 10px; border-radius: 50%; background: #e53935; }
.hear {
  position: absolute;
  inset: 40% 15% auto;
}
.controls { display: flex; flex-wrap: wrap; gap: 8px; justify-content: center; }
:host([frame]) .controls { padding: 0 8px 8px; }
button {
  font: inherit;
  min-height: 44px;
  min-width: 44px;
  padding: 8px 16px;
  border: 0;
  border-radius: 22px;
  background: #e8eaf0;
  color: #1b1d21;
  cursor: pointer;
}
button:focus-visible { outline: 3px solid #3b6ef5; outline-offset: 2px; }
button:disabled { opacity: 0.55; cursor: default; }
button.call { background: #1f8a4c; color: #fff; font-weight: 600; }
button.end { background: #c62828; color: #fff; }
button[aria-pressed="true"] { background: #1b1d21; color: #fff; }
.status, .problem { margin: 0; text-align: center; }
.status:empty { display: none; }
.problem { color: #a31515; background: #fdecec; border-radius: 8px; padding: 8px 12px; }
:host([frame]) .status, :host([frame]) .problem { margin: 0 8px; }
`;
