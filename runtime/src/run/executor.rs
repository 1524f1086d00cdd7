//! What drives an `async fn` case: a tokio runtime with the `tokio` feature, otherwise a minimal
//! executor on the test's thread, so a build that does not ask for tokio never compiles it.

use std::future::Future;

/// Runs a case's future to completion on the calling (test) thread.
///
/// With the `tokio` feature: on a current-thread tokio runtime with every driver the build of
/// tokio has (timers, sockets), made for this case and dropped after it, like `#[tokio::test]`
/// does; so `tokio::time`, `tokio::spawn` and clients built on tokio (reqwest, async-openai)
/// work inside the case, and nothing it spawned outlives it.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    #[cfg(feature = "tokio")]
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start a tokio runtime for this async case: {e}"));
        runtime.block_on(future)
    }
    #[cfg(not(feature = "tokio"))]
    {
        local_block_on(future)
    }
}

/// Polls `future` on this thread, parking between wake-ups: no reactor, no timers.
#[cfg_attr(feature = "tokio", allow(dead_code))]
pub(crate) fn local_block_on<F: Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// What to add to a case's panic message: tokio's "no reactor running" panic, in a build without
/// the `tokio` feature, says how to get a runtime.
pub(crate) fn panic_hint(message: &str) -> Option<&'static str> {
    let from_tokio = message.contains("there is no reactor running")
        || message.contains("must be called from the context of a Tokio");
    (from_tokio && !cfg!(feature = "tokio")).then_some(
        "this case needs a tokio runtime, and async cases run on one only with proposal-eval's `tokio` feature: \
         proposal-eval = { version = \"0.1\", features = [\"tokio\"] } in [dev-dependencies]",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    // In the recording crate, which runs model calls; its tokio feature is this crate's.
    use proposal_eval_recording::sys::outside_async;

    #[test]
    fn the_local_executor_waits_for_a_wake_from_another_thread() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        use std::task::{Context, Poll};
        struct Later {
            done: Arc<AtomicBool>,
            started: bool,
        }
        impl Future for Later {
            type Output = u32;
            fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
                if self.done.load(Ordering::SeqCst) {
                    return Poll::Ready(7);
                }
                if !self.started {
                    self.started = true;
                    let (done, waker) = (self.done.clone(), cx.waker().clone());
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        done.store(true, Ordering::SeqCst);
                        waker.wake();
                    });
                }
                Poll::Pending
            }
        }
        let later = Later {
            done: Arc::default(),
            started: false,
        };
        assert_eq!(local_block_on(later), 7);
    }

    /// Without a reactor, tokio's timer panics; the hint names the feature that gives one.
    #[test]
    fn tokio_without_a_runtime_is_explained() {
        let panic = std::panic::catch_unwind(|| {
            local_block_on(async {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            })
        })
        .unwrap_err();
        let message = crate::panics::message(&*panic);
        assert!(message.contains("no reactor running"), "{message}");
        if cfg!(feature = "tokio") {
            assert_eq!(panic_hint(&message), None);
        } else {
            let hint = panic_hint(&message).unwrap();
            assert!(hint.contains("features = [\"tokio\"]"), "{hint}");
        }
        assert_eq!(panic_hint("index out of bounds"), None);
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn async_cases_get_timers_and_spawn() {
        let started = std::time::Instant::now();
        let n = block_on(async {
            let task = tokio::spawn(async { 40 });
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            task.await.unwrap() + 2
        });
        assert_eq!(n, 42);
        assert!(started.elapsed() >= std::time::Duration::from_millis(20));
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn a_blocking_call_inside_the_runtime_runs_on_its_own_thread() {
        let here = std::thread::current().id();
        let (inside, outside) = block_on(async {
            (
                outside_async(|| std::thread::current().id()),
                std::thread::current().id(),
            )
        });
        assert_ne!(inside, outside);
        assert_eq!(outside, here);
        assert_eq!(outside_async(|| std::thread::current().id()), here);
    }
}
