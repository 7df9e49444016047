;; text_stats: reads the JSON envelope {"tool":"text_stats","input":{"text":"..."}}, finds the "text" string and
;; counts its bytes (UTF-8, after JSON unescaping; JSON.stringify writes non-ASCII characters as they are and
;; escapes only control characters, counted as one byte each), words and lines; answers {"bytes":N,"words":N,"lines":N}. Memory: a bump allocator from 1024 up.
(module
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 1024))

  (func (export "alloc") (param $size i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $size)))
    ;; grow when the bump pointer passes the end (the host cap makes memory.grow fail: that traps below)
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq
              (memory.grow (i32.add (i32.div_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)) (i32.const 1)))
              (i32.const -1))
          (then unreachable))))
    (local.get $ptr))

  ;; index of the first byte after `"text":"` at or after $p, or -1
  (func $find (param $p i32) (param $end i32) (result i32)
    (block $none
      (loop $scan
        (br_if $none (i32.gt_u (i32.add (local.get $p) (i32.const 8)) (local.get $end)))
        (if (i32.and
              (i32.and (i32.eq (i32.load8_u (local.get $p)) (i32.const 34))
                       (i32.eq (i32.load (i32.add (local.get $p) (i32.const 1))) (i32.const 0x74786574)))
              (i32.and (i32.eq (i32.load16_u (i32.add (local.get $p) (i32.const 5))) (i32.const 0x3a22))
                       (i32.eq (i32.load8_u (i32.add (local.get $p) (i32.const 7))) (i32.const 34))))
          (then (return (i32.add (local.get $p) (i32.const 8)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (i32.const -1))

  ;; writes the decimal digits of $n at $out, returns the new end
  (func $itoa (param $n i32) (param $out i32) (result i32)
    (local $len i32) (local $m i32) (local $i i32)
    (local.set $m (local.get $n))
    (local.set $len (i32.const 1))
    (block $done (loop $count
      (br_if $done (i32.lt_u (local.get $m) (i32.const 10)))
      (local.set $m (i32.div_u (local.get $m) (i32.const 10)))
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (br $count)))
    (local.set $i (local.get $len))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (local.get $out) (local.get $i)) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (i32.gt_u (local.get $i) (i32.const 0))))
    (i32.add (local.get $out) (local.get $len)))

  ;; copies the bytes of a constant string at $src (length $len) to $out
  (func $put (param $out i32) (param $src i32) (param $len i32) (result i32)
    (memory.copy (local.get $out) (local.get $src) (local.get $len))
    (i32.add (local.get $out) (local.get $len)))

  (data (i32.const 16) "{\"bytes\":,\"words\":,\"lines\":}")

  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $p i32) (local $end i32) (local $c i32) (local $bytes i32) (local $words i32) (local $lines i32)
    (local $inword i32) (local $out i32) (local $start i32)
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $p (call $find (local.get $ptr) (local.get $end)))
    (if (i32.ge_s (local.get $p) (i32.const 0))
      (then
        (local.set $lines (i32.const 1))
        (block $stop (loop $next
          (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
          (local.set $c (i32.load8_u (local.get $p)))
          (br_if $stop (i32.eq (local.get $c) (i32.const 34)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (if (i32.eq (local.get $c) (i32.const 92))
            (then
              (local.set $c (i32.load8_u (local.get $p)))
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (if (i32.eq (local.get $c) (i32.const 110)) (then (local.set $c (i32.const 10))))
              (if (i32.eq (local.get $c) (i32.const 116)) (then (local.set $c (i32.const 9))))
              (if (i32.eq (local.get $c) (i32.const 114)) (then (local.set $c (i32.const 13))))
              (if (i32.eq (local.get $c) (i32.const 117))
                (then
                  ;; \uXXXX: a control character, one byte
                  (local.set $p (i32.add (local.get $p) (i32.const 4)))
                  (local.set $c (i32.const 1))))))
          (local.set $bytes (i32.add (local.get $bytes) (i32.const 1)))
          (if (i32.eq (local.get $c) (i32.const 10)) (then (local.set $lines (i32.add (local.get $lines) (i32.const 1)))))
          (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 10)))
                      (i32.or (i32.eq (local.get $c) (i32.const 9)) (i32.eq (local.get $c) (i32.const 13))))
            (then (local.set $inword (i32.const 0)))
            (else
              (if (i32.eqz (local.get $inword))
                (then (local.set $words (i32.add (local.get $words) (i32.const 1))) (local.set $inword (i32.const 1))))))
          (br $next)))
        (if (i32.eqz (local.get $bytes)) (then (local.set $lines (i32.const 0))))))
    (local.set $start (call $alloc_out))
    (local.set $out (local.get $start))
    (local.set $out (call $put (local.get $out) (i32.const 16) (i32.const 9)))
    (local.set $out (call $itoa (local.get $bytes) (local.get $out)))
    (local.set $out (call $put (local.get $out) (i32.const 25) (i32.const 9)))
    (local.set $out (call $itoa (local.get $words) (local.get $out)))
    (local.set $out (call $put (local.get $out) (i32.const 34) (i32.const 9)))
    (local.set $out (call $itoa (local.get $lines) (local.get $out)))
    (local.set $out (call $put (local.get $out) (i32.const 43) (i32.const 1)))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $start)) (i64.const 32)) (i64.extend_i32_u (i32.sub (local.get $out) (local.get $start)))))

  ;; room for the answer: 64 bytes
  (func $alloc_out (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (i32.const 64)))
    (local.get $ptr))
)
