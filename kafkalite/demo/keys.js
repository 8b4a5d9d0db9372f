// The presenter's keyboard: → / PageDown / space next, ← / PageUp back, R reset (what a
// presentation clicker sends), anywhere on the page. Each press goes to Python as a
// message; Python owns the state (steps.py), this module only listens.
const KEYS = {
  ArrowRight: "next", PageDown: "next", " ": "next",
  ArrowLeft: "back", PageUp: "back",
  r: "reset", R: "reset",
};

function render({ model, el }) {
  el.classList.add("kl-keys");
  function onKey(event) {
    const target = event.target;
    if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = KEYS[event.key];
    if (!key) return;
    event.preventDefault();
    model.send({ key });
  }
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}

export default { render };
