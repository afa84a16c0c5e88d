"""The kernels' websocket for dashboard viewers: ``ServerApp.kernel_websocket_connection_class
= workbench.server.viewer_channels.ViewerChannels``.

Voila's page talks to its kernel over Jupyter's kernel websocket, which would forward any
message, ``execute_request`` included: a viewer could run code in the dashboard's kernel
and read any city. For a viewer this connection forwards only the widgets' messages
(:data:`workbench.dashboard.viewers.VIEWER_MESSAGES`) and drops the rest with a warning;
other users' connections are Jupyter's own, unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.services.kernels.connection.base import (
    deserialize_binary_message,
    deserialize_msg_from_ws_v1,
)
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from workbench.dashboard.viewers import VIEWER_MESSAGES, viewer_areas

V1 = "v1.kernel.websocket.jupyter.org"


class ViewerChannels(ZMQChannelsWebsocketConnection):
    def handle_incoming_message(self, incoming_msg: Any) -> None:
        handler = self.websocket_handler
        if viewer_areas(handler, handler.current_user) is not None:
            kind = self._message_type(incoming_msg)
            if kind not in VIEWER_MESSAGES:
                self.log.warning(
                    "dashboard viewer %s: kernel message %r dropped (viewers send only "
                    "widget messages)",
                    handler.current_user.username,
                    kind,
                )
                return
        super().handle_incoming_message(incoming_msg)

    def _message_type(self, incoming: Any) -> str | None:
        try:
            if self.subprotocol == V1:
                _, parts = deserialize_msg_from_ws_v1(incoming)
                header = self.get_part("header", None, parts)
            elif isinstance(incoming, bytes):
                header = deserialize_binary_message(incoming).get("header")
            else:
                header = json.loads(incoming).get("header")
            return str(header.get("msg_type"))
        except (ValueError, TypeError, AttributeError, IndexError):
            return None
