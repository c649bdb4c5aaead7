/** The continuous-batching {@code Engine}: requests, scheduling by token budget, batch assembly, streaming. Arrives with the batching issue. */
package io.modelopt.scheduler;
