// Building the page's elements. Every text goes in as textContent: task and agent text are
// untrusted, and never become markup.

export function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined && text !== null) made.textContent = String(text);
  return made;
}

export function table(columns, rows) {
  const made = element("table");
  const head = element("tr");
  for (const name of columns) head.append(element("th", "", name));
  made.append(head);
  for (const row of rows) {
    const line = element("tr");
    for (const cell of row) {
      line.append(cell instanceof Node ? wrap("td", cell) : element("td", "", cell ?? ""));
    }
    made.append(line);
  }
  return made;
}

function wrap(tag, child) {
  const made = element(tag);
  made.append(child);
  return made;
}

// How long ago an ISO time was, as a person reads it: 45s, 3m 05s, 1h 02m.
export function since(iso) {
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
  const pad = (n) => String(n).padStart(2, "0");
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${pad(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h ${pad(Math.floor(seconds / 60) % 60)}m`;
}

export function dollars(cost) {
  return `$${(cost || 0).toFixed(cost >= 1 ? 2 : 4)}`;
}

// The address a link may point at: an http(s) one, as the browser parses it; null for any
// other (a javascript: address would run in the page).
export function webAddress(address) {
  let url;
  try { url = new URL(String(address)); } catch { return null; }
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname ? url.href : null;
}
