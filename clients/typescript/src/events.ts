// Server-Sent Events read from a fetch body. The API sends each event as
// `event: <name>` and one `data: <JSON>` line, then a blank line.

export interface ServerEvent {
  name: string;
  data: unknown;
}

export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let name = "";
  let data = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      // stream: a character cut between two reads waits for its rest.
      buffered += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).replace(/\r$/, "");
        buffered = buffered.slice(newline + 1);
        if (line === "") {
          if (name !== "") yield { name, data: JSON.parse(data) };
          name = "";
          data = "";
        } else if (line.startsWith("event:")) {
          name = line.slice("event:".length).trim();
        } else if (line.startsWith("data:")) {
          data += line.slice("data:".length).trimStart();
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
}
