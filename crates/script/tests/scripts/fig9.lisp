(defun begin
  (setq io 0) (setq p0 0) (setq file0 0) (setq p1 1) (setq file1 1))
(defun spit_100
  (setq counter 0)
  (while (lt counter 100)
    (spit_char io) (spit_int p0) (spit_int file0) (spit_int counter) (spit_char 0x00)
    (spit_char io) (spit_int p1) (spit_int file1) (spit_int (mod counter 50)) (spit_char 0x00)
    (setq counter (add counter 1))))
(defun end (spit_100) (spit_100) (spit_100))
