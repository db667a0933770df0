package io.hourglass.chaos;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.hourglass.api.v1.Delivery;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.client.ChannelFactory;
import java.util.function.Consumer;

/**
 * A {@link ChannelFactory} that shows every delivery frame to an observer the moment it comes off
 * the wire, before the client library handles it.
 *
 * <p>Why the wire and not the delivery handler: a stream carries its frames in order, and the
 * client completes an {@code ackConfirmed()} future while it handles the ACK reply frame, on the
 * same gRPC thread that handles the stream's delivery frames. So a delivery observed here after a
 * confirmation was sent by the server after that confirmation (or arrived on a later stream). The
 * handler, in contrast, runs on its own thread and may still be working through deliveries the
 * server sent before it confirmed.
 *
 * <p>The observer runs on gRPC threads, concurrently for different streams; it must be
 * thread-safe and quick.
 */
final class DeliveryWiretap {
    private DeliveryWiretap() {
    }

    /** Plaintext channels, as {@link ChannelFactory#plaintext()}, that report each delivery to {@code observer}. */
    static ChannelFactory plaintext(Consumer<Delivery> observer) {
        ClientInterceptor tap = new Tap(observer);
        return address -> ManagedChannelBuilder.forAddress(address.host(), address.port())
                .usePlaintext()
                .intercept(tap)
                .build();
    }

    private static final class Tap implements ClientInterceptor {
        private final Consumer<Delivery> observer;

        Tap(Consumer<Delivery> observer) {
            this.observer = observer;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onMessage(R message) {
                            if (message instanceof SubscribeResponse response && response.hasDelivery()) {
                                observer.accept(response.getDelivery());
                            }
                            super.onMessage(message);
                        }
                    }, headers);
                }
            };
        }
    }
}
