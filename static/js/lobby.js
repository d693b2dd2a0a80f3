// The lobby socket. It only shows the connection state for now; the server decides
// everything and this page draws what it is told.
(function () {
  "use strict";
  const status = document.getElementById("connection");
  let delay = 500;

  function show(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/ws/lobby/`);
    socket.addEventListener("open", () => { delay = 500; });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "lobby") {
        const who = message.user ? message.user.username : "a visitor";
        show("open", `Connected to the lobby as ${who}.`);
      } else if (message.type === "error") {
        console.warn("lobby:", message.code, message.message);
      }
    });
    socket.addEventListener("close", () => {
      show("closed", "Disconnected from the lobby; reconnecting…");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    });
  }

  connect();
})();
