// Talking to the board's server: reads, and a person's moves sent with the token the start
// printed (in the address's #token=..., which a browser never sends to a server, so it is
// never logged). After a move the page hears "board:changed" and reads the plan again.

export const token = (() => {
  const found = new URLSearchParams(location.hash.slice(1)).get("token");
  if (found) {
    sessionStorage.setItem("taskhand-token", found);
    history.replaceState(null, "", location.pathname);  // out of the address bar and history
  }
  return sessionStorage.getItem("taskhand-token") || "";
})();

export async function read(path) {
  const answer = await fetch(path, { headers: { "Accept": "application/json" } });
  const data = await answer.json();
  if (!answer.ok) notice(`${data.error} (fix: ${data.fix})`);
  return answer.ok ? data : null;
}

// What a move asks of the person before it is sent, by the field its body carries.
const ASKS = {
  revise: ["text", "What should the plan change?"],
  comment: ["text", "Your comment:"],
  respond: ["text", "Your answer:"],
  park: ["why", "Why park it?"],
};

export async function send(task, name, body = {}) {
  const ask = ASKS[name];
  if (ask && body[ask[0]] === undefined) {
    const text = prompt(`${task}: ${ask[1]}`);
    if (text === null) return false;
    body = { ...body, [ask[0]]: text };
  }
  const answer = await fetch(`/api/tasks/${encodeURIComponent(task)}/${name}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Authorization": `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const data = await answer.json();
  notice(answer.ok ? "" : `${task}: ${data.error} (fix: ${data.fix})`);
  document.dispatchEvent(new CustomEvent("board:changed"));
  return answer.ok;
}

export function notice(text) {
  const shown = document.getElementById("notice");
  shown.textContent = text;
  shown.hidden = !text;
}
