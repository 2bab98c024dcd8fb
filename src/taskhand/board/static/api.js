// Talking to the board's server. Every read and every move carries the token the start printed
// (in the address's #token=..., which a browser never sends to a server) in a header: nothing
// of it sits in an address (logs, history, Referer) or in a cookie another page could make
// the browser send. After a move the page hears "board:changed" and reads the plan again.

export const token = (() => {
  const found = new URLSearchParams(location.hash.slice(1)).get("token");
  if (found) {
    sessionStorage.setItem("taskhand-token", found);
    history.replaceState(null, "", location.pathname);  // out of the address bar and history
  }
  return sessionStorage.getItem("taskhand-token") || "";
})();

// An address pasted into this tab that differs only in its fragment (a board started again on
// the same port) does not load the page again by itself: the page does, with the new token.
window.addEventListener("hashchange", () => {
  const found = new URLSearchParams(location.hash.slice(1)).get("token");
  if (!found) return;
  sessionStorage.setItem("taskhand-token", found);
  location.replace(location.pathname);
});

export function withToken(headers = {}) {
  return { ...headers, "Authorization": `Bearer ${token}` };
}

// A read: its answer, or null when there is none. The token refused stops the page (locked);
// another refusal goes to `refused`, in the page's words.
export async function read(path, refused = notice) {
  let answer;
  try {
    answer = await fetch(path, { headers: withToken({ "Accept": "application/json" }) });
  } catch {
    return null;  // the board away: the event stream says so, and reads again when it is back
  }
  if (answer.status === 401) { locked(); return null; }
  let data;
  try { data = await answer.json(); } catch { data = { error: "unreadable answer", fix: "reload" }; }
  if (!answer.ok) refused(`${data.error} (fix: ${data.fix})`);
  return answer.ok ? data : null;
}

// A picture the page may show: read with the token, shown from memory (an <img> cannot send
// a header), the memory given back once it is drawn.
export function picture(path, alt) {
  const shown = document.createElement("img");
  shown.alt = alt;
  fetch(path, { headers: withToken() })
    .then((answer) => (answer.ok ? answer.blob() : null))
    .then((blob) => {
      if (!blob) return;
      shown.addEventListener("load", () => URL.revokeObjectURL(shown.src), { once: true });
      shown.src = URL.createObjectURL(blob);
    })
    .catch(() => {});
  return shown;
}

// What a move asks of the person before it is sent, by the field its body carries.
const ASKS = {
  revise: ["text", "What should the plan change?"],
  comment: ["text", "Your comment:"],
  respond: ["text", "Your answer:"],
  park: ["why", "Why park it?"],
};

export async function send(task, name, body = {}) {
  if (!token) { locked(); return false; }
  const ask = ASKS[name];
  if (ask && body[ask[0]] === undefined) {
    const text = prompt(`${task}: ${ask[1]}`);
    if (text === null) return false;
    body = { ...body, [ask[0]]: text };
  }
  let answer;
  try {
    answer = await fetch(`/api/tasks/${encodeURIComponent(task)}/${name}`, {
      method: "POST",
      headers: withToken({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
    });
  } catch {
    away();
    return false;
  }
  if (answer.status === 401) { locked(); return false; }
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

// The page's standing with its board, in a person's words: the key it has does not open the
// board (it was restarted: each start makes a new key; or the page was opened without one),
// or the board does not answer. Reading stops once the key is refused: only a new address
// with the new key helps then.
const OPEN_AGAIN = "Open the address the board printed in the terminal when it started " +
  "(the line \"board: http://…#token=…\"); if it is no longer running, start it again with " +
  "taskhand board.";

export let stopped = false;

export function locked() {
  stopped = true;
  document.body.classList.add("locked");  // what the page shows is no longer kept up to date
  trouble(token
    ? `This page's key no longer opens the board: the board was stopped and started again, ` +
      `and each start makes a new key. ${OPEN_AGAIN}`
    : `This page was opened without the board's key, so it cannot show the board. ${OPEN_AGAIN}`);
  document.dispatchEvent(new CustomEvent("board:locked"));
}

export function away() {
  if (!stopped) trouble(`The board does not answer. If it was stopped, start it again and ` +
    `open the address it prints; this page keeps trying meanwhile.`);
}

export function answering() {
  if (!stopped) trouble("");
}

function trouble(text) {
  const shown = document.getElementById("trouble");
  shown.textContent = text;
  shown.hidden = !text;
}
