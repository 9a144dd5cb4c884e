(defun main
  (if (eq (RECORD_TYPE) IO)
      (progn (setq file (IO_FILE))
             (if (eq (IO_FUNCTION) 0x00)
                 (aset read_counter file (add (aref read_counter file) 1))
                 (aset write_counter file (add (aref write_counter file) 1))))))
(defun end
  (for file write_counter
    (if (notfound read_counter file) (aset read_counter file 0)))
  (for file read_counter
    (echo file (aref read_counter file) (aref write_counter file))
    (nl)))
