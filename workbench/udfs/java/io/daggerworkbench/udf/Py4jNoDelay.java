package io.daggerworkbench.udf;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.SocketFactory;
import py4j.CallbackClient;
import py4j.DefaultGatewayServerListener;
import py4j.GatewayServer;
import py4j.Py4JPythonClient;
import py4j.Py4JServerConnection;

/**
 * Py4J's sockets in the driver JVM without Nagle's algorithm.
 *
 * <p>Py4J 0.10.9.9 (PySpark 4.0's) writes an answer or a command of more than 8 KB in two
 * socket writes (its BufferedWriter fills, then flushes). With Nagle's algorithm on, the second
 * write waits for the first one's ACK, which the other side delays by up to 40 ms: so a large
 * answer (a batch's dead letters, a plan's JSON, a progress event) takes 40 ms instead of
 * under one. py4j issue #516; py4j PR #592 turns it off upstream, in no release yet.
 *
 * <p>{@link #install} turns it off for every connection the gateway server has and accepts
 * from now on (Python threads calling the JVM), and for every connection its callback client
 * opens from now on (JVM threads calling Python: foreachBatch, listeners).
 */
public final class Py4jNoDelay {
    private Py4jNoDelay() {}

    /** Turns Nagle's algorithm off on {@code server}'s connections, now and later. */
    public static void install(GatewayServer server) throws ReflectiveOperationException {
        server.addListener(new DefaultGatewayServerListener() {
            @Override
            public void connectionStarted(Py4JServerConnection connection) {
                noDelay(connection.getSocket());
            }
        });
        for (Object connection : copy(field(GatewayServer.class, "connections").get(server))) {
            noDelay(((Py4JServerConnection) connection).getSocket());
        }
        Py4JPythonClient client = server.getCallbackClient();
        if (client instanceof CallbackClient callbacks) {
            Field factory = field(CallbackClient.class, "socketFactory");
            SocketFactory current = (SocketFactory) factory.get(callbacks);
            if (!(current instanceof NoDelayFactory)) {
                factory.set(callbacks, new NoDelayFactory(current));
            }
            for (Object connection : copy(field(CallbackClient.class, "connections").get(callbacks))) {
                if (connection instanceof Py4JServerConnection open) {
                    noDelay(open.getSocket());
                }
            }
        }
    }

    private static Field field(Class<?> owner, String name) throws NoSuchFieldException {
        Field found = owner.getDeclaredField(name);
        found.setAccessible(true);
        return found;
    }

    private static List<Object> copy(Object collection) {
        return new ArrayList<>((Collection<?>) collection);
    }

    private static void noDelay(Socket socket) {
        if (socket == null) {
            return;
        }
        try {
            socket.setTcpNoDelay(true);
        } catch (IOException closed) {
            // a connection closing as it is found: nothing to speed up
        }
    }

    /** A socket factory whose sockets have Nagle's algorithm off. */
    private static final class NoDelayFactory extends SocketFactory {
        private final SocketFactory inner;

        NoDelayFactory(SocketFactory inner) {
            this.inner = inner;
        }

        @Override
        public Socket createSocket() throws IOException {
            return quick(inner.createSocket());
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return quick(inner.createSocket(host, port));
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress local, int localPort)
                throws IOException {
            return quick(inner.createSocket(host, port, local, localPort));
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return quick(inner.createSocket(host, port));
        }

        @Override
        public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
                throws IOException {
            return quick(inner.createSocket(host, port, local, localPort));
        }

        private static Socket quick(Socket socket) throws IOException {
            socket.setTcpNoDelay(true);
            return socket;
        }
    }
}
